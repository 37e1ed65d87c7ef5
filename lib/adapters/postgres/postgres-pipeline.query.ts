import type { BoundStatement, StatementResult } from './bound-statement.interface';

/** A bound statement as sent: `name` set when it runs as a named (reused) server statement. */
export interface PipelinedStatement extends BoundStatement {
  /** The server-side statement name; '' for the unnamed statement. */
  statementName: string;
  /** Parse it in this message (false: the connection already holds `statementName`). */
  parse: boolean;
  /** Close `statementName` first: the connection may or may not hold it (after a failure). */
  closeFirst: boolean;
}

/** The frontend messages node-postgres' connection sends on behalf of a submitted query. */
export interface PgProtocolConnection {
  parse(message: { text: string; name: string; types: number[] }): void;
  bind(message: { portal: string; statement: string; values: readonly unknown[] }): void;
  describe(message: { type: 'P' | 'S'; name: string }): void;
  execute(message: { portal: string; rows: number }): void;
  close(message: { type: 'P' | 'S'; name: string }): void;
  sync(): void;
  stream?: { cork?: () => void; uncork?: () => void };
}

/** What node-postgres' client offers a submitted query: its type parsers. */
export interface PgTypeParsers {
  getTypeParser(oid: number, format?: 'text' | 'binary'): (value: string) => unknown;
}

interface RowDescription {
  fields: Array<{ name: string; dataTypeID: number }>;
}

/**
 * Several statements in one round trip over node-postgres' `Submittable` interface (the one
 * pg-cursor and pg-query-stream use): Parse/Bind/Describe/Execute for each statement, then a
 * single Sync. The server runs them in order; the first error skips the rest up to the Sync and
 * fails the whole message. Every value is a bound parameter in text format.
 */
export class PostgresPipelineQuery {
  private readonly results: StatementResult[] = [];
  private current: StatementResult = emptyResult();
  private parsers: Array<[string, (value: string) => unknown]> = [];
  private failure: Error | null = null;
  private settle!: { resolve(results: StatementResult[]): void; reject(error: Error): void };
  readonly done: Promise<StatementResult[]>;

  constructor(
    private readonly statements: readonly PipelinedStatement[],
    private readonly types: PgTypeParsers,
  ) {
    this.done = new Promise((resolve, reject) => (this.settle = { resolve, reject }));
  }

  submit(connection: PgProtocolConnection): null {
    const stream = connection.stream;
    stream?.cork?.();
    try {
      for (const statement of this.statements) {
        if (statement.closeFirst) connection.close({ type: 'S', name: statement.statementName });
        if (statement.parse)
          connection.parse({ text: statement.text, name: statement.statementName, types: [] });
        connection.bind({
          portal: '',
          statement: statement.statementName,
          values: statement.values,
        });
        connection.describe({ type: 'P', name: '' });
        connection.execute({ portal: '', rows: 0 });
      }
      connection.sync();
    } finally {
      stream?.uncork?.();
    }
    return null;
  }

  handleRowDescription(message: RowDescription): void {
    this.parsers = message.fields.map((field) => [
      field.name,
      this.types.getTypeParser(field.dataTypeID, 'text'),
    ]);
  }

  handleDataRow(message: { fields: Array<string | null> }): void {
    const row: Record<string, unknown> = {};
    message.fields.forEach((raw, index) => {
      const [name, parse] = this.parsers[index];
      row[name] = raw === null ? null : parse(raw);
    });
    this.current.rows.push(row);
  }

  handleCommandComplete(message: { text: string }): void {
    const [command, ...rest] = message.text.split(' ');
    const count = Number(rest[rest.length - 1]);
    this.current.command = command;
    this.current.rowCount = Number.isInteger(count) ? count : null;
    this.nextResult();
  }

  handleEmptyQuery(): void {
    this.nextResult();
  }

  handlePortalSuspended(): void {
    this.failure ??= new Error('Unexpected PortalSuspended in a pipelined message');
  }

  handleCopyInResponse(): void {
    this.failure ??= new Error('COPY is not supported in a pipelined message');
  }

  handleCopyData(): void {}

  /** node-postgres calls this for an ErrorResponse; it stops routing messages to this query. */
  handleError(error: Error): void {
    this.settle.reject(error);
  }

  handleReadyForQuery(): void {
    if (this.failure) this.settle.reject(this.failure);
    else this.settle.resolve(this.results);
  }

  private nextResult(): void {
    this.results.push(this.current);
    this.current = emptyResult();
    this.parsers = [];
  }
}

function emptyResult(): StatementResult {
  return { command: '', rowCount: null, rows: [] };
}
