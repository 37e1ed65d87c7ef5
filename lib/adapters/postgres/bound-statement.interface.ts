/** One SQL statement and the values bound to its `$1 … $n` placeholders. */
export interface BoundStatement {
  text: string;
  values: readonly unknown[];
}

/** One statement's result. */
export interface StatementResult {
  /** The command tag's verb: `SELECT`, `UPDATE`, `INSERT`, `BEGIN`, `COMMIT` … */
  command: string;
  rowCount: number | null;
  rows: Array<Record<string, unknown>>;
}
