/** A statement whose values are already SQL literals: `template` holds `$1 … $n`. */
export interface LiteralStatement {
  template: string;
  values: readonly string[];
}

/** What one connection has prepared, under which generation of names. */
interface ConnectionStatements {
  generation: number;
  prepared: Set<string>;
}

/** A message's SQL, and what to record once the server has run it. */
export interface RenderedStatements {
  sql: string[];
  /** Where in `sql` each statement runs (PREPAREs come in between). */
  positions: number[];
  /** The message ran: its PREPAREs now exist on the connection. */
  succeeded(): void;
  /** The message failed somewhere: which PREPAREs ran is unknown, so the connection starts over. */
  failed(): void;
}

/** Distinct statements prepared at most; any further shape is sent with inlined values. */
const MAX_NAMED_STATEMENTS = 256;

/**
 * Server-side prepared statements for the hot path's simple-query messages (which cannot bind
 * parameters): each statement shape is prepared once per connection with `PREPARE`, sent in the
 * same message as its first `EXECUTE`, so preparing costs no round trip and PostgreSQL skips
 * parsing and planning afterwards. Prepared statements outlive a rollback, but after a failed
 * message it is unknown which PREPAREs ran, so that connection moves to fresh names.
 */
export class PostgresPreparedStatements {
  private readonly names = new Map<string, number>();
  private readonly connections = new WeakMap<object, ConnectionStatements>();
  private generations = 0;

  constructor(private readonly enabled: boolean) {}

  /** The SQL that runs `statements` on `connection`, in order. */
  render(connection: object, statements: readonly LiteralStatement[]): RenderedStatements {
    if (!this.enabled) {
      return {
        sql: statements.map(inlineStatement),
        positions: statements.map((_, index) => index),
        succeeded: noop,
        failed: noop,
      };
    }
    let state = this.connections.get(connection);
    if (!state) this.connections.set(connection, (state = { generation: 0, prepared: new Set() }));
    const current = state;
    const preparedNow: string[] = [];
    const sql: string[] = [];
    const positions: number[] = [];
    for (const statement of statements) {
      const index = this.indexOf(statement.template);
      if (index === null) {
        positions.push(sql.length);
        sql.push(inlineStatement(statement));
        continue;
      }
      const name = `geneva_drive_${index}_${current.generation}`;
      if (!current.prepared.has(name) && !preparedNow.includes(name)) {
        sql.push(`PREPARE ${name} AS ${statement.template}`);
        preparedNow.push(name);
      }
      positions.push(sql.length);
      sql.push(
        statement.values.length > 0
          ? `EXECUTE ${name}(${statement.values.join(', ')})`
          : `EXECUTE ${name}`,
      );
    }
    return {
      sql,
      positions,
      succeeded: () => preparedNow.forEach((name) => current.prepared.add(name)),
      failed: () => {
        if (preparedNow.length === 0 && current.prepared.size === 0) return;
        current.generation = ++this.generations;
        current.prepared = new Set();
      },
    };
  }

  private indexOf(template: string): number | null {
    const known = this.names.get(template);
    if (known !== undefined) return known;
    if (this.names.size >= MAX_NAMED_STATEMENTS) return null;
    this.names.set(template, this.names.size);
    return this.names.size - 1;
  }
}

/**
 * The statement with each `$n` replaced by its literal. Placeholders inside quoted identifiers are
 * left alone; templates hold no string literals (PostgresLiterals.statementOf checks).
 */
export function inlineStatement(statement: LiteralStatement): string {
  const { template, values } = statement;
  let sql = '';
  let index = 0;
  while (index < template.length) {
    const char = template[index];
    if (char === '"') {
      const end = closingQuote(template, index);
      sql += template.slice(index, end + 1);
      index = end + 1;
    } else if (char === '$' && /\d/.test(template[index + 1] ?? '')) {
      const digits = /^\d+/.exec(template.slice(index + 1))![0];
      sql += values[Number(digits) - 1];
      index += 1 + digits.length;
    } else {
      sql += char;
      index += 1;
    }
  }
  return sql;
}

/** Where the quoted identifier opening at `start` closes (`""` inside it is an escaped quote). */
export function closingQuote(sql: string, start: number): number {
  let end = start + 1;
  while (end < sql.length) {
    if (sql[end] !== '"') end += 1;
    else if (sql[end + 1] === '"') end += 2;
    else return end;
  }
  return sql.length;
}

function noop(): void {}
