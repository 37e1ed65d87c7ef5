export * from './cli-exit-code';
export type { GenevaDriveCliApp } from './app-module.loader';
export type { CliStreams } from './cli-output';
export * from './run-geneva-drive-cli';
