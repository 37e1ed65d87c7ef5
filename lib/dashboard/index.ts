export * from './dashboard-options.interface';
export * from './geneva-drive-dashboard.module';
