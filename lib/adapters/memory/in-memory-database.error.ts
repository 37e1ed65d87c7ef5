/** What went wrong in an {@link InMemoryDatabaseError}, with the SQLSTATE PostgreSQL would use. */
export type InMemoryDatabaseErrorKind =
  | 'unique_violation'
  | 'foreign_key_violation'
  | 'deadlock_detected'
  | 'undefined_table'
  | 'undefined_column'
  | 'transaction_closed';

const SQLSTATE: Record<InMemoryDatabaseErrorKind, string | undefined> = {
  unique_violation: '23505',
  foreign_key_violation: '23503',
  // 40P01 is one of the codes the engine retries (isTransientDatabaseError), as on PostgreSQL.
  deadlock_detected: '40P01',
  undefined_table: '42P01',
  undefined_column: '42703',
  transaction_closed: undefined,
};

/**
 * A failed statement of the InMemoryWorkflowRepository: the in-memory counterpart of a
 * driver's error. `isDatabaseError` recognises every one; `isUniqueViolation` those of kind
 * `unique_violation`. `code` carries PostgreSQL's SQLSTATE for the same failure.
 */
export class InMemoryDatabaseError extends Error {
  override readonly name = 'InMemoryDatabaseError';
  readonly code: string | undefined;

  constructor(
    readonly kind: InMemoryDatabaseErrorKind,
    message: string,
    /** The unique index or foreign key violated, when there is one. */
    readonly constraint: string | null = null,
  ) {
    super(message);
    this.code = SQLSTATE[kind];
    Object.setPrototypeOf(this, new.target.prototype);
  }
}
