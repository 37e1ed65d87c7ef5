import { valueChecks } from './contract.check';

// The real check is compile-time (contract.check.ts); this keeps it in the test run too.
describe('public API contract', () => {
  it('lib/index.ts and lib/testing/index.ts export every contract value', () => {
    for (const [name, value] of Object.entries(valueChecks)) {
      expect([name, value]).toEqual([name, expect.anything()]);
    }
  });
});
