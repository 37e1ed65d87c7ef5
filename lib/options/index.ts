export * from './resolve-module-options';
export * from './resolved-options.interface';
export * from './resolved-options.token';
