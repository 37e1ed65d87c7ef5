import type { DataSource } from 'typeorm';
import {
  databaseFamily,
  hasUtcTimezone,
  isUniqueViolation,
  supportsLimitInSubquery,
} from '../../lib/adapters/typeorm/sql-dialect';

const dataSource = (options: Record<string, unknown>) => ({ options }) as unknown as DataSource;

describe('sql-dialect', () => {
  it.each([
    ['postgres', 'postgres'],
    ['mariadb', 'mysql'],
    ['mysql', 'mysql'],
    ['better-sqlite3', 'sqlite'],
    ['sqlite', 'sqlite'],
  ])('puts the %s driver in the %s family', (type, family) => {
    expect(databaseFamily(dataSource({ type }))).toBe(family);
  });

  it('refuses drivers it does not support, naming them', () => {
    expect(() => databaseFamily(dataSource({ type: 'mssql' }))).toThrow(/'mssql'/);
  });

  it('recognizes unique violations of each driver, and nothing else', () => {
    const driverError = (fields: Record<string, unknown>) => ({ driverError: fields });
    expect(isUniqueViolation(driverError({ code: '23505' }))).toBe(true);
    expect(isUniqueViolation(driverError({ code: 'ER_DUP_ENTRY', errno: 1062 }))).toBe(true);
    expect(isUniqueViolation(driverError({ errno: 1062 }))).toBe(true);
    expect(isUniqueViolation(driverError({ code: 'SQLITE_CONSTRAINT_UNIQUE' }))).toBe(true);
    expect(isUniqueViolation(driverError({ code: 'SQLITE_CONSTRAINT_PRIMARYKEY' }))).toBe(true);
    expect(isUniqueViolation(driverError({ code: '23503' }))).toBe(false); // PG foreign key
    expect(isUniqueViolation(driverError({ code: 'ER_LOCK_DEADLOCK', errno: 1213 }))).toBe(false);
    expect(isUniqueViolation(driverError({ code: 'SQLITE_BUSY' }))).toBe(false);
    expect(isUniqueViolation(new Error('boom'))).toBe(false);
    expect(isUniqueViolation(null)).toBe(false);
  });

  it("accepts only UTC for the MariaDB/MySQL timezone option ('Z' or a zero offset)", () => {
    for (const timezone of ['Z', 'z', '+00:00', '-00:00', '+0000']) {
      expect(hasUtcTimezone(dataSource({ type: 'mariadb', timezone }))).toBe(true);
    }
    for (const timezone of [undefined, 'local', '+01:00', 'Europe/Paris']) {
      expect(hasUtcTimezone(dataSource({ type: 'mariadb', timezone }))).toBe(false);
    }
  });

  it('knows MariaDB/MySQL refuse LIMIT inside an IN subquery', () => {
    expect([
      supportsLimitInSubquery('postgres'),
      supportsLimitInSubquery('mysql'),
      supportsLimitInSubquery('sqlite'),
    ]).toEqual([true, false, true]);
  });
});
