import { randomBytes } from 'node:crypto';
import type { BoundStatement } from './bound-statement.interface';
import type { PipelinedStatement } from './postgres-pipeline.query';

/** What one connection holds of this library instance's named statements. */
interface ConnectionNames {
  parsed: Set<string>;
  /** A message that might have parsed these failed: close them before parsing again. */
  uncertain: Set<string>;
}

/** Distinct statement texts named at most; any further one runs unnamed. */
const MAX_NAMED_STATEMENTS = 256;

/**
 * Protocol-level named statements (`preparedStatements: true`): each statement text gets a name
 * unique to this library instance (`gd_<instance>_<n>`), parsed once per connection and reused, so
 * PostgreSQL skips parsing and planning. Off by default: a transaction-mode pooler (PgBouncer
 * before 1.21, or without `max_prepared_statements`) hands the next transaction another server
 * connection, which does not hold the name. Off, every statement is the unnamed statement, which
 * leaves nothing behind on the server connection.
 */
export class PostgresStatementNames {
  private readonly instance = randomBytes(4).toString('hex');
  private readonly names = new Map<string, string>();
  private readonly connections = new WeakMap<object, ConnectionNames>();

  constructor(private readonly enabled: boolean) {}

  /** The statements as they go out on `connection`, and what to record once the message ran. */
  plan(
    connection: object,
    statements: readonly BoundStatement[],
    { named }: { named: boolean } = { named: true },
  ): { statements: PipelinedStatement[]; succeeded(): void; failed(): void } {
    if (!this.enabled || !named) {
      return {
        statements: statements.map((statement) => unnamed(statement)),
        succeeded: noop,
        failed: noop,
      };
    }
    let state = this.connections.get(connection);
    if (!state)
      this.connections.set(connection, (state = { parsed: new Set(), uncertain: new Set() }));
    const held = state;
    const parsedNow = new Set<string>();
    const planned = statements.map((statement): PipelinedStatement => {
      const name = this.nameOf(statement.text);
      if (name === null) return unnamed(statement);
      const parse = !held.parsed.has(name) && !parsedNow.has(name);
      if (parse) parsedNow.add(name);
      return {
        text: statement.text,
        values: statement.values,
        statementName: name,
        parse,
        closeFirst: parse && held.uncertain.has(name),
      };
    });
    return {
      statements: planned,
      succeeded: () => {
        for (const name of parsedNow) {
          held.parsed.add(name);
          held.uncertain.delete(name);
        }
      },
      // Which Parse ran before the error is not known, nor whether the server still holds the
      // names it had (26000 after a DEALLOCATE): every name is closed before it is parsed again.
      failed: () => {
        for (const name of [...parsedNow, ...held.parsed]) held.uncertain.add(name);
        held.parsed.clear();
      },
    };
  }

  private nameOf(text: string): string | null {
    const known = this.names.get(text);
    if (known !== undefined) return known;
    if (this.names.size >= MAX_NAMED_STATEMENTS) return null;
    const name = `gd_${this.instance}_${this.names.size}`;
    this.names.set(text, name);
    return name;
  }
}

/** One object shape for every planned statement (no spread: the hot path builds several a step). */
function unnamed(statement: BoundStatement): PipelinedStatement {
  return {
    text: statement.text,
    values: statement.values,
    statementName: '',
    parse: true,
    closeFirst: false,
  };
}

function noop(): void {}
