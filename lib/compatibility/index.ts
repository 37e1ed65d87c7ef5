export * from './installed-version.reader';
export * from './peer-version.check';
export * from './unsupported-peers';
