export * from './geneva-drive-exception.filter';
