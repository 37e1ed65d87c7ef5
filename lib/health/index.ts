export * from './geneva-drive-health.probe';
export * from './health-findings.interface';
