export * from './geneva-drive-health.indicator';
