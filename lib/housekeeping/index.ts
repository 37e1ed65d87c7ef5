export * from './housekeeping.service';
