import {
  closingQuote,
  inlineStatement,
  PostgresPreparedStatements,
  type LiteralStatement,
} from '../../lib/persistence/postgres-prepared-statements';

const lockWorkflow: LiteralStatement = {
  template: 'SELECT "id", "state" FROM "geneva_drive_workflows" WHERE "id" = $1 FOR UPDATE',
  values: ["'wf-1'"],
};
const finishExecution: LiteralStatement = {
  template:
    'UPDATE "geneva_drive_step_executions" SET "state" = $1, "updated_at" = $2 WHERE "id" = $3',
  values: ["'completed'", "'2026-01-01T00:00:00.000Z'", "'ex-1'"],
};
const countWorkflows: LiteralStatement = {
  template: 'SELECT count(*) FROM "geneva_drive_workflows"',
  values: [],
};

/**
 * The hot path's simple-query messages run each statement shape as a server-side prepared
 * statement: PREPAREd once per connection in the same message as its first EXECUTE. If the
 * bookkeeping is wrong, a connection either prepares a name twice (the message fails with
 * "already exists") or executes a name it never prepared (it fails with "does not exist"), and
 * every step on that connection fails; `positions` must point at the EXECUTEs, or the batch hands
 * a PREPARE's empty result to the caller as the rows it read.
 */
describe('PostgresPreparedStatements.render', () => {
  it('prepares a statement once per connection and executes it with its literal values', () => {
    const statements = new PostgresPreparedStatements(true);
    const connection = {};

    const first = statements.render(connection, [lockWorkflow]);
    expect(first.sql).toEqual([
      `PREPARE geneva_drive_0_0 AS ${lockWorkflow.template}`,
      "EXECUTE geneva_drive_0_0('wf-1')",
    ]);
    first.succeeded();

    const again = statements.render(connection, [{ ...lockWorkflow, values: ["'wf-2'"] }]);
    expect(again.sql).toEqual(["EXECUTE geneva_drive_0_0('wf-2')"]);
    again.succeeded();

    // Another connection (another pg client object) has prepared nothing yet.
    const elsewhere = statements.render({}, [lockWorkflow]);
    expect(elsewhere.sql).toEqual([
      `PREPARE geneva_drive_0_0 AS ${lockWorkflow.template}`,
      "EXECUTE geneva_drive_0_0('wf-1')",
    ]);
  });

  it('executes a statement without values without parentheses', () => {
    const statements = new PostgresPreparedStatements(true);
    expect(statements.render({}, [countWorkflows]).sql).toEqual([
      `PREPARE geneva_drive_0_0 AS ${countWorkflows.template}`,
      'EXECUTE geneva_drive_0_0',
    ]);
  });

  it('points each position at the EXECUTE of its statement, PREPAREs in between', () => {
    const statements = new PostgresPreparedStatements(true);
    const connection = {};
    statements.render(connection, [finishExecution]).succeeded();

    const rendered = statements.render(connection, [finishExecution, lockWorkflow, countWorkflows]);
    expect(rendered.sql).toEqual([
      "EXECUTE geneva_drive_0_0('completed', '2026-01-01T00:00:00.000Z', 'ex-1')",
      `PREPARE geneva_drive_1_0 AS ${lockWorkflow.template}`,
      "EXECUTE geneva_drive_1_0('wf-1')",
      `PREPARE geneva_drive_2_0 AS ${countWorkflows.template}`,
      'EXECUTE geneva_drive_2_0',
    ]);
    expect(rendered.positions).toEqual([0, 2, 4]);
  });

  it('prepares a template used twice in one message once', () => {
    const statements = new PostgresPreparedStatements(true);
    const rendered = statements.render({}, [lockWorkflow, { ...lockWorkflow, values: ["'wf-2'"] }]);
    expect(rendered.sql).toEqual([
      `PREPARE geneva_drive_0_0 AS ${lockWorkflow.template}`,
      "EXECUTE geneva_drive_0_0('wf-1')",
      "EXECUTE geneva_drive_0_0('wf-2')",
    ]);
    expect(rendered.positions).toEqual([1, 2]);
  });

  it('records nothing as prepared until the message succeeded', () => {
    const statements = new PostgresPreparedStatements(true);
    const connection = {};
    statements.render(connection, [lockWorkflow]); // never sent, or still in flight

    expect(statements.render(connection, [lockWorkflow]).sql[0]).toBe(
      `PREPARE geneva_drive_0_0 AS ${lockWorkflow.template}`,
    );
  });

  it('moves a connection whose message failed to new names, and leaves other connections alone', () => {
    const statements = new PostgresPreparedStatements(true);
    const failing = {};
    const healthy = {};
    statements.render(failing, [lockWorkflow]).succeeded();
    statements.render(healthy, [lockWorkflow]).succeeded();

    // The message prepared finishExecution, then failed: whether that PREPARE ran is unknown.
    statements.render(failing, [finishExecution, lockWorkflow]).failed();

    const retry = statements.render(failing, [finishExecution, lockWorkflow]);
    const retryNames = retry.sql.map((sql) => /geneva_drive_\d+_\d+/.exec(sql)![0]);
    expect(new Set(retryNames).size).toBe(2);
    expect(retryNames.some((name) => name.endsWith('_0'))).toBe(false);
    expect(retry.sql.filter((sql) => sql.startsWith('PREPARE '))).toHaveLength(2);
    expect(retry.sql[retry.positions[0]]).toMatch(/^EXECUTE geneva_drive_1_[1-9]\d*\('completed'/);
    expect(retry.sql[retry.positions[1]]).toMatch(/^EXECUTE geneva_drive_0_[1-9]\d*\('wf-1'\)$/);
    retry.succeeded();
    expect(statements.render(failing, [lockWorkflow]).sql).toEqual([retry.sql[retry.positions[1]]]);

    expect(statements.render(healthy, [lockWorkflow]).sql).toEqual([
      "EXECUTE geneva_drive_0_0('wf-1')",
    ]);
  });

  it('moves to new names after a failed message that prepared nothing (a name deallocated by someone else)', () => {
    const statements = new PostgresPreparedStatements(true);
    const connection = {};
    statements.render(connection, [lockWorkflow]).succeeded();

    const executeOnly = statements.render(connection, [lockWorkflow]);
    expect(executeOnly.sql).toEqual(["EXECUTE geneva_drive_0_0('wf-1')"]);
    executeOnly.failed(); // e.g. 26000 after DEALLOCATE ALL

    expect(statements.render(connection, [lockWorkflow]).sql).toEqual([
      expect.stringMatching(/^PREPARE geneva_drive_0_[1-9]\d* AS SELECT/),
      expect.stringMatching(/^EXECUTE geneva_drive_0_[1-9]\d*\('wf-1'\)$/),
    ]);
  });

  it('inlines every statement when disabled, positions 0..n-1', () => {
    const statements = new PostgresPreparedStatements(false);
    const connection = {};
    const rendered = statements.render(connection, [lockWorkflow, finishExecution, countWorkflows]);
    expect(rendered.sql).toEqual([
      `SELECT "id", "state" FROM "geneva_drive_workflows" WHERE "id" = 'wf-1' FOR UPDATE`,
      `UPDATE "geneva_drive_step_executions" SET "state" = 'completed', "updated_at" = '2026-01-01T00:00:00.000Z' WHERE "id" = 'ex-1'`,
      countWorkflows.template,
    ]);
    expect(rendered.positions).toEqual([0, 1, 2]);
    rendered.succeeded();
    expect(statements.render(connection, [lockWorkflow]).sql).toEqual([rendered.sql[0]]);
  });

  it('prepares 256 distinct templates at most, and inlines any further one', () => {
    const statements = new PostgresPreparedStatements(true);
    const connection = {};
    const shapes: LiteralStatement[] = Array.from({ length: 257 }, (_, index) => ({
      template: `SELECT "c${index}" FROM "t" WHERE "id" = $1`,
      values: [`'${index}'`],
    }));

    const rendered = statements.render(connection, shapes);
    expect(rendered.sql.filter((sql) => sql.startsWith('PREPARE '))).toHaveLength(256);
    expect(rendered.sql[rendered.positions[255]]).toBe("EXECUTE geneva_drive_255_0('255')");
    expect(rendered.sql[rendered.positions[256]]).toBe(`SELECT "c256" FROM "t" WHERE "id" = '256'`);
    expect(rendered.sql.at(-1)).toBe(`SELECT "c256" FROM "t" WHERE "id" = '256'`);
    rendered.succeeded();

    // A known template stays prepared; another new one is inlined too.
    const later = statements.render(connection, [
      shapes[0],
      { template: 'SELECT "late" FROM "t" WHERE "id" = $1', values: ["'x'"] },
    ]);
    expect(later.sql).toEqual([
      "EXECUTE geneva_drive_0_0('0')",
      `SELECT "late" FROM "t" WHERE "id" = 'x'`,
    ]);
  });
});

/**
 * With prepared statements off (or past the limit) values are written into the SQL text: a `$n`
 * that is part of a quoted identifier must stay as it is, or a column named `a$1` would be
 * rewritten into a literal and the statement would read or write the wrong thing.
 */
describe('inlineStatement and closingQuote', () => {
  it('replaces each $n with its literal, $10 and above included', () => {
    const values = Array.from({ length: 11 }, (_, index) => `'v${index + 1}'`);
    expect(inlineStatement({ template: 'SELECT $1, $10, $11, $2', values })).toBe(
      "SELECT 'v1', 'v10', 'v11', 'v2'",
    );
  });

  it('leaves $n inside quoted identifiers alone, escaped quotes included', () => {
    const template = 'UPDATE "t" SET "a$1" = $1, "x""$2" = $2 WHERE "$3""" = $3';
    expect(inlineStatement({ template, values: ["'one'", "'two'", 'NULL'] })).toBe(
      `UPDATE "t" SET "a$1" = 'one', "x""$2" = 'two' WHERE "$3""" = NULL`,
    );
  });

  it('finds where a quoted identifier closes, past escaped quotes', () => {
    expect(closingQuote('"abc" = $1', 0)).toBe(4);
    expect(closingQuote('SET "x""$2" = $2', 4)).toBe(10);
    expect(closingQuote('"""" x', 0)).toBe(3);
  });

  it('treats an unterminated quoted identifier as running to the end', () => {
    expect(closingQuote('"abc', 0)).toBe(4);
    expect(inlineStatement({ template: 'SELECT "a$1', values: ["'v'"] })).toBe('SELECT "a$1');
  });
});
