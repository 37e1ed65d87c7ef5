import {
  quoteIdentifier,
  quoteTable,
  type IdentifierDialect,
} from '../../lib/adapters/sql-identifiers';

const DIALECTS: IdentifierDialect[] = ['postgres', 'mysql', 'sqlite'];
const QUOTE: Record<IdentifierDialect, string> = { postgres: '"', mysql: '`', sqlite: '"' };

/** Names from configuration that would break out of a naively quoted identifier, or look odd. */
const HOSTILE_NAMES = [
  'plain_name',
  'a"b',
  'a""b',
  '"',
  'a`b',
  '`',
  "it's",
  'schema.table',
  'with space',
  ' leading and trailing ',
  'Zürich ✓ 東京',
  '"; DROP TABLE x; --',
  '`; DROP TABLE x; --',
  "'); DROP TABLE x; --",
  'back\\slash',
  'line\nbreak',
  '$1',
  '?',
];

/**
 * Reads one quoted identifier the way the database's lexer does (a doubled quote is one quote
 * character; any other quote ends the token) and returns the name it denotes, or throws when the
 * text is not exactly one quoted identifier (text left after the closing quote means a break-out).
 */
function readQuotedIdentifier(text: string, quote: string): string {
  if (!text.startsWith(quote)) throw new Error(`does not start with ${quote}: ${text}`);
  let name = '';
  for (let i = 1; i < text.length; i++) {
    const char = text[i];
    if (char !== quote) {
      name += char;
    } else if (text[i + 1] === quote) {
      name += quote;
      i++;
    } else if (i === text.length - 1) {
      return name;
    } else {
      throw new Error(`text after the closing quote: ${text.slice(i + 1)}`);
    }
  }
  throw new Error(`unterminated identifier: ${text}`);
}

describe('quoteIdentifier', () => {
  describe.each(DIALECTS)('%s', (dialect) => {
    const quote = QUOTE[dialect];

    it.each(HOSTILE_NAMES)('renders %j as exactly one identifier naming it', (name) => {
      const quoted = quoteIdentifier(name, dialect);
      expect(readQuotedIdentifier(quoted, quote)).toBe(name);
    });

    it('refuses an empty name and a name with NUL', () => {
      expect(() => quoteIdentifier('', dialect)).toThrow(/Not a usable SQL identifier/);
      expect(() => quoteIdentifier('a\u0000b', dialect)).toThrow(/Not a usable SQL identifier/);
      expect(() => quoteIdentifier('\u0000', dialect)).toThrow(/Not a usable SQL identifier/);
    });
  });

  it('doubles the quote character of the dialect and leaves the other one alone', () => {
    expect(quoteIdentifier('a"b', 'postgres')).toBe('"a""b"');
    expect(quoteIdentifier('a"b', 'sqlite')).toBe('"a""b"');
    expect(quoteIdentifier('a"b', 'mysql')).toBe('`a"b`');
    expect(quoteIdentifier('a`b', 'postgres')).toBe('"a`b"');
    expect(quoteIdentifier('a`b', 'mysql')).toBe('`a``b`');
    expect(quoteIdentifier('"; DROP TABLE x; --', 'postgres')).toBe('"""; DROP TABLE x; --"');
    expect(quoteIdentifier('`; DROP TABLE x; --', 'mysql')).toBe('```; DROP TABLE x; --`');
  });

  it('keeps a dot, spaces and unicode inside the one identifier', () => {
    expect(quoteIdentifier('schema.table', 'postgres')).toBe('"schema.table"');
    expect(quoteIdentifier('gd "odd" schema', 'postgres')).toBe('"gd ""odd"" schema"');
    expect(quoteIdentifier('Zürich ✓', 'mysql')).toBe('`Zürich ✓`');
  });
});

describe('quoteTable', () => {
  it('qualifies by schema on PostgreSQL and SQLite, by database on MariaDB/MySQL', () => {
    const table = { schema: 'app', database: 'shop', tableName: 'geneva_drive_workflows' };
    expect(quoteTable(table, 'postgres')).toBe('"app"."geneva_drive_workflows"');
    expect(quoteTable(table, 'sqlite')).toBe('"app"."geneva_drive_workflows"');
    expect(quoteTable(table, 'mysql')).toBe('`shop`.`geneva_drive_workflows`');
  });

  it('leaves an unqualified table bare', () => {
    expect(quoteTable({ tableName: 't' }, 'postgres')).toBe('"t"');
    expect(quoteTable({ database: 'shop', tableName: 't' }, 'postgres')).toBe('"t"');
    expect(quoteTable({ schema: 'app', tableName: 't' }, 'mysql')).toBe('`t`');
  });

  describe.each(DIALECTS)('%s', (dialect) => {
    const quote = QUOTE[dialect];

    it.each(HOSTILE_NAMES)('quotes owner %j and table on their own', (name) => {
      const quoted = quoteTable({ schema: name, database: name, tableName: name }, dialect);
      // Both halves are the same length, so the separating dot sits in the middle.
      const half = (quoted.length - 1) / 2;
      expect(quoted[half]).toBe('.');
      expect(readQuotedIdentifier(quoted.slice(0, half), quote)).toBe(name);
      expect(readQuotedIdentifier(quoted.slice(half + 1), quote)).toBe(name);
    });

    it('refuses an empty table name and NUL in either part', () => {
      expect(() => quoteTable({ tableName: '' }, dialect)).toThrow(/Not a usable SQL identifier/);
      expect(() => quoteTable({ tableName: 'a\u0000' }, dialect)).toThrow(
        /Not a usable SQL identifier/,
      );
      expect(() =>
        quoteTable({ schema: 'a\u0000', database: 'a\u0000', tableName: 't' }, dialect),
      ).toThrow(/Not a usable SQL identifier/);
    });
  });
});
