/** How a database quotes a name: PostgreSQL and SQLite with `"`, MariaDB/MySQL with a backtick. */
export type IdentifierDialect = 'postgres' | 'mysql' | 'sqlite';

/**
 * The one way a name from configuration (schema, table, column, index) reaches SQL text: quoted,
 * with the quote character doubled inside it. Values never take this path; they are bound
 * parameters.
 */
export function quoteIdentifier(name: string, dialect: IdentifierDialect = 'postgres'): string {
  if (name.length === 0 || name.includes('\u0000')) {
    throw new Error(`Not a usable SQL identifier: ${JSON.stringify(name)}`);
  }
  const quote = dialect === 'mysql' ? '`' : '"';
  return `${quote}${name.split(quote).join(quote + quote)}${quote}`;
}

/** A table, schema-qualified when it has a schema, each part quoted on its own. */
export function quoteTable(
  table: { schema?: string; database?: string; tableName: string },
  dialect: IdentifierDialect = 'postgres',
): string {
  const owner = dialect === 'mysql' ? table.database : table.schema;
  return owner
    ? `${quoteIdentifier(owner, dialect)}.${quoteIdentifier(table.tableName, dialect)}`
    : quoteIdentifier(table.tableName, dialect);
}
