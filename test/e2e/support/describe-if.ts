import { testDatabase, type TestDatabase } from './database';

/**
 * `describe` when `condition` holds, otherwise a skipped describe (reported as skipped, never
 * silently dropped). For tests that only make sense on some databases: say why at the call site.
 */
export function describeIf(condition: boolean): jest.Describe {
  return condition ? describe : describe.skip;
}

/** A describe that runs only when the e2e suite runs on one of `databases` (GENEVA_TEST_DB). */
export function describeOn(...databases: TestDatabase[]): jest.Describe {
  return describeIf(databases.includes(testDatabase));
}

/** `it` when `condition` holds, otherwise a skipped test. Say why at the call site. */
export function itIf(condition: boolean): jest.It {
  return condition ? it : it.skip;
}
