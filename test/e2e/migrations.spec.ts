import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import {
  DataSource,
  QueryFailedError,
  TableColumn,
  type DataSourceOptions,
  type QueryRunner,
} from 'typeorm';
import { v7 as uuidv7 } from 'uuid';
import {
  GENEVA_DRIVE_ENTITIES,
  SignalEntity,
  StepExecutionEntity,
  WorkflowEntity,
} from '../../lib/entities';
import {
  GENEVA_DRIVE_MIGRATIONS,
  GenevaDriveMariaDbJsonText1764400004000,
  GenevaDriveNoPadCollation1764400003000,
} from '../../lib/migrations';
import { MissingMigrationError } from '../../lib/errors/missing-migration.error';
import { WORKFLOWS_FILLFACTOR } from '../../lib/migrations/lean-step-writes.migration';
import { INDEX_NAMES } from '../../lib/migrations/migration.constants';
import { mysqlEnsureCollation } from '../../lib/migrations/mysql-schema';
import type { StepExecutionState, WorkflowState } from '../../lib/interfaces/states.interface';
import { checkMariaDbJsonColumns } from '../../lib/adapters/typeorm/mariadb-json-columns.check';
import { mariadbConnection } from './support/database';
import { describeOn } from './support/describe-if';
import { readInstalledVersion } from '../../lib/compatibility/installed-version.reader';

const PG = { host: '127.0.0.1', port: 5432, username: 'postgres', database: 'test' } as const;
const TABLES = ['geneva_drive_workflows', 'geneva_drive_step_executions', 'geneva_drive_signals'];

/** Runs one statement outside the schema under test (creating or dropping that schema). */
async function adminQuery(sql: string): Promise<void> {
  const admin = await new DataSource({
    type: 'postgres',
    host: PG.host,
    port: PG.port,
    username: PG.username,
    database: PG.database,
  }).initialize();
  try {
    await admin.query(sql);
  } finally {
    await admin.destroy();
  }
}

/** Runs one statement on MariaDB outside the database under test (creating or dropping it). */
async function mariadbAdminQuery(sql: string): Promise<void> {
  const admin = await new DataSource({ ...mariadbConnection, database: 'test' }).initialize();
  try {
    await admin.query(sql);
  } finally {
    await admin.destroy();
  }
}

function isMysql(ds: DataSource): boolean {
  return ds.options.type === 'mariadb' || ds.options.type === 'mysql';
}

function newWorkflow(ds: DataSource, overrides: Partial<WorkflowEntity> = {}): WorkflowEntity {
  const now = new Date();
  return ds.getRepository(WorkflowEntity).create({
    id: uuidv7(),
    type: 'OrderWorkflow',
    heroType: 'Order',
    heroId: '42',
    state: 'ready',
    allowMultiple: false,
    metadata: null,
    createdAt: now,
    updatedAt: now,
    ...overrides,
  });
}

function newExecution(
  ds: DataSource,
  workflowId: string,
  state: StepExecutionState,
  overrides: Partial<StepExecutionEntity> = {},
): StepExecutionEntity {
  const now = new Date();
  return ds.getRepository(StepExecutionEntity).create({
    id: uuidv7(),
    workflowId,
    stepName: 'reserve',
    state,
    scheduledFor: now,
    createdAt: now,
    updatedAt: now,
    ...overrides,
  });
}

function newSignal(
  ds: DataSource,
  workflowId: string,
  idempotencyKey: string | null,
): SignalEntity {
  const now = new Date();
  return ds.getRepository(SignalEntity).create({
    id: uuidv7(),
    workflowId,
    name: 'paid',
    idempotencyKey,
    state: 'pending',
    payload: null,
    claimed: 0,
    consumed: 0,
    createdAt: now,
    updatedAt: now,
  });
}

async function saveWorkflow(
  ds: DataSource,
  overrides: Partial<WorkflowEntity> = {},
): Promise<WorkflowEntity> {
  return ds.getRepository(WorkflowEntity).save(newWorkflow(ds, overrides));
}

/** The library's JSON columns, `table.column`. */
const JSON_COLUMN_PATHS = [
  'geneva_drive_workflows.metadata',
  'geneva_drive_step_executions.metadata',
  'geneva_drive_step_executions.cursor',
  'geneva_drive_signals.payload',
];

/** MariaDB: the CHECK constraints of the library's tables, `table.constraint` → clause. */
async function mariadbChecks(ds: DataSource, database: string): Promise<Map<string, string>> {
  const rows = await ds.query<Array<{ tableName: string; name: string; clause: string }>>(
    `SELECT TABLE_NAME AS tableName, CONSTRAINT_NAME AS name, CHECK_CLAUSE AS clause
       FROM information_schema.CHECK_CONSTRAINTS WHERE CONSTRAINT_SCHEMA = ?`,
    [database],
  );
  return new Map(rows.map((row) => [`${row.tableName}.${row.name}`, row.clause]));
}

/**
 * MariaDB: every JSON column is LONGTEXT (utf8mb4_bin) with a named table-level JSON_VALID check,
 * and none has the column-level check of MariaDB's json type (named after the column).
 */
async function expectJsonText(ds: DataSource, database: string): Promise<void> {
  const checks = await mariadbChecks(ds, database);
  const columns = await ds.query<Array<{ path: string; dataType: string; collation: string }>>(
    `SELECT CONCAT(TABLE_NAME, '.', COLUMN_NAME) AS path, DATA_TYPE AS dataType, COLLATION_NAME AS collation
       FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ?`,
    [database],
  );
  for (const path of JSON_COLUMN_PATHS) {
    const [table, column] = path.split('.');
    expect([path, columns.find((found) => found.path === path)]).toEqual([
      path,
      { path, dataType: 'longtext', collation: 'utf8mb4_bin' },
    ]);
    expect([path, checks.get(path)]).toEqual([path, undefined]);
    expect([path, checks.get(`${table}.${table}_${column}_is_json`)]).toEqual([
      path,
      `json_valid(\`${column}\`)`,
    ]);
  }
}

async function setWorkflowState(ds: DataSource, id: string, state: WorkflowState): Promise<void> {
  await ds.getRepository(WorkflowEntity).update({ id }, { state, updatedAt: new Date() });
}

async function withQueryRunner<T>(ds: DataSource, fn: (qr: QueryRunner) => Promise<T>): Promise<T> {
  const qr = ds.createQueryRunner();
  try {
    return await fn(qr);
  } finally {
    await qr.release();
  }
}

/** Runs every migration's `up()` again, as a re-run after a partial failure would. */
async function rerunAllUps(ds: DataSource): Promise<void> {
  await withQueryRunner(ds, async (qr) => {
    for (const Migration of GENEVA_DRIVE_MIGRATIONS) await new Migration().up(qr);
  });
}

/** The workflows table's `fillfactor` storage parameter on PostgreSQL; null when unset or elsewhere. */
async function workflowsFillfactor(ds: DataSource): Promise<number | null> {
  if (ds.options.type !== 'postgres') return null;
  const [row] = await ds.query<Array<{ options: string[] | null }>>(
    `SELECT c.reloptions AS options FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE c.relname = 'geneva_drive_workflows' AND n.nspname = COALESCE($1::text, current_schema())`,
    [(ds.options as { schema?: string }).schema ?? null],
  );
  const setting = row?.options?.find((option) => option.startsWith('fillfactor='));
  return setting ? Number(setting.slice('fillfactor='.length)) : null;
}

async function indexNames(ds: DataSource, table: string): Promise<string[]> {
  if (isMysql(ds)) {
    // Not getTable(): on MariaDB it also reads typeorm_metadata for the generated key columns.
    const rows = await ds.query<Array<{ name: string }>>(
      `SELECT DISTINCT INDEX_NAME AS name FROM information_schema.STATISTICS
        WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? AND INDEX_NAME <> 'PRIMARY'`,
      [table],
    );
    return rows.map((row) => row.name).sort();
  }
  return withQueryRunner(ds, async (qr) => {
    const loaded = await qr.getTable(table);
    return (loaded?.indices ?? []).map((index) => index.name ?? '').sort();
  });
}

/** Invariants enforced by the schema itself, shared by the PostgreSQL, MariaDB and SQLite suites. */
function describeConstraints(
  getDataSource: () => DataSource,
  { foreignKeys }: { foreignKeys: boolean },
): void {
  it('rejects a second ongoing workflow for the same (type, hero) until the first is over', async () => {
    const ds = getDataSource();
    const first = await saveWorkflow(ds, { heroId: 'unique-1' });
    await expect(saveWorkflow(ds, { heroId: 'unique-1' })).rejects.toBeInstanceOf(QueryFailedError);
    await expect(
      saveWorkflow(ds, { heroId: 'unique-1', type: 'OtherWorkflow' }),
    ).resolves.toBeDefined();

    await setWorkflowState(ds, first.id, 'paused');
    await expect(saveWorkflow(ds, { heroId: 'unique-1' })).rejects.toBeInstanceOf(QueryFailedError);

    await setWorkflowState(ds, first.id, 'finished');
    const second = await saveWorkflow(ds, { heroId: 'unique-1' });
    await setWorkflowState(ds, second.id, 'canceled');
    await expect(saveWorkflow(ds, { heroId: 'unique-1' })).resolves.toBeDefined();
  });

  it('keys uniqueness on the exact (type, hero type, hero id): no field-boundary or case collisions', async () => {
    const ds = getDataSource();
    await saveWorkflow(ds, { type: 'ab', heroType: 'c', heroId: 'boundary-1' });
    await saveWorkflow(ds, { type: 'a', heroType: 'bc', heroId: 'boundary-1' });
    await saveWorkflow(ds, { type: 'a', heroType: 'b', heroId: 'cboundary-1' });
    await saveWorkflow(ds, { heroId: 'Case-1' });
    await saveWorkflow(ds, { heroId: 'case-1' });
    await expect(saveWorkflow(ds, { heroId: 'case-1' })).rejects.toBeInstanceOf(QueryFailedError);
    // Trailing spaces count (MariaDB/MySQL: a NO PAD collation, not utf8mb4_bin's PAD SPACE).
    await saveWorkflow(ds, { heroId: 'case-1 ' });
    await expect(saveWorkflow(ds, { heroId: 'case-1 ' })).rejects.toBeInstanceOf(QueryFailedError);
    expect(await ds.getRepository(WorkflowEntity).countBy({ heroId: 'case-1' })).toBe(1);
  });

  it('lets allow_multiple and heroless workflows coexist', async () => {
    const ds = getDataSource();
    await saveWorkflow(ds, { heroId: 'multi-1' });
    await saveWorkflow(ds, { heroId: 'multi-1', allowMultiple: true });
    await saveWorkflow(ds, { heroId: 'multi-1', allowMultiple: true });
    await saveWorkflow(ds, { heroType: null, heroId: null });
    await saveWorkflow(ds, { heroType: null, heroId: null });
    const count = await ds.getRepository(WorkflowEntity).countBy({ heroId: 'multi-1' });
    expect(count).toBe(3);
  });

  it('allows one scheduled or in-progress execution per workflow, waiting ones aside', async () => {
    const ds = getDataSource();
    const repo = ds.getRepository(StepExecutionEntity);
    const workflow = await saveWorkflow(ds, { heroId: 'active-1' });
    await repo.save(newExecution(ds, workflow.id, 'completed'));
    await repo.save(newExecution(ds, workflow.id, 'waiting'));
    const scheduled = await repo.save(newExecution(ds, workflow.id, 'scheduled'));
    await expect(repo.save(newExecution(ds, workflow.id, 'scheduled'))).rejects.toBeInstanceOf(
      QueryFailedError,
    );
    await expect(repo.save(newExecution(ds, workflow.id, 'in_progress'))).rejects.toBeInstanceOf(
      QueryFailedError,
    );
    await repo.update({ id: scheduled.id }, { state: 'completed', updatedAt: new Date() });
    await expect(repo.save(newExecution(ds, workflow.id, 'in_progress'))).resolves.toBeDefined();
  });

  it('deduplicates signals by (workflow, name, idempotency key), never on a null key', async () => {
    const ds = getDataSource();
    const repo = ds.getRepository(SignalEntity);
    const workflow = await saveWorkflow(ds, { heroId: 'signal-1' });
    await repo.save(newSignal(ds, workflow.id, 'evt-1'));
    await expect(repo.save(newSignal(ds, workflow.id, 'evt-1'))).rejects.toBeInstanceOf(
      QueryFailedError,
    );
    await repo.save(newSignal(ds, workflow.id, null));
    await repo.save(newSignal(ds, workflow.id, null));
    // Keys compare exactly: case and trailing spaces count (MariaDB tables use a NO PAD binary
    // collation, neither a case-insensitive one nor utf8mb4_bin, for which 'evt-1' = 'evt-1 ').
    await repo.save(newSignal(ds, workflow.id, 'EVT-1'));
    await repo.save(newSignal(ds, workflow.id, 'evt-1 '));
    await expect(repo.save(newSignal(ds, workflow.id, 'evt-1 '))).rejects.toBeInstanceOf(
      QueryFailedError,
    );
    expect(await repo.countBy({ workflowId: workflow.id, idempotencyKey: 'evt-1' })).toBe(1);
    // Gone again, so that the MariaDB suite's down() (back to PAD SPACE) finds no such pair.
    await repo.delete({ workflowId: workflow.id, idempotencyKey: 'evt-1 ' });
  });

  if (foreignKeys) {
    it('deletes executions and signals with their workflow', async () => {
      const ds = getDataSource();
      const workflow = await saveWorkflow(ds, { heroId: 'cascade-1' });
      await ds.getRepository(StepExecutionEntity).save(newExecution(ds, workflow.id, 'completed'));
      await ds.getRepository(StepExecutionEntity).save(newExecution(ds, workflow.id, 'scheduled'));
      await ds.getRepository(SignalEntity).save(newSignal(ds, workflow.id, 'evt-cascade'));
      await ds.getRepository(WorkflowEntity).delete({ id: workflow.id });
      expect(await ds.getRepository(StepExecutionEntity).countBy({ workflowId: workflow.id })).toBe(
        0,
      );
      expect(await ds.getRepository(SignalEntity).countBy({ workflowId: workflow.id })).toBe(0);
    });
  } else {
    it('has no foreign keys: children stay until deleted explicitly, as the library does', async () => {
      const ds = getDataSource();
      const workflow = await saveWorkflow(ds, { heroId: 'cascade-1' });
      await ds.getRepository(StepExecutionEntity).save(newExecution(ds, workflow.id, 'scheduled'));
      await ds.getRepository(SignalEntity).save(newSignal(ds, workflow.id, 'evt-cascade'));
      await ds.getRepository(WorkflowEntity).delete({ id: workflow.id });
      expect(await ds.getRepository(StepExecutionEntity).countBy({ workflowId: workflow.id })).toBe(
        1,
      );
      expect(await ds.getRepository(SignalEntity).countBy({ workflowId: workflow.id })).toBe(1);
      await ds.getRepository(StepExecutionEntity).delete({ workflowId: workflow.id });
      await ds.getRepository(SignalEntity).delete({ workflowId: workflow.id });
    });
  }

  it('round-trips dates with milliseconds, JSON key order and date cursors', async () => {
    const ds = getDataSource();
    const at = new Date('2025-03-04T05:06:07.891Z');
    const metadata = {
      zeta: 1,
      alpha: { stepJobOptions: { queue: 'q', priority: 3 } },
      mid: [1, 'x'],
    };
    const workflow = await saveWorkflow(ds, {
      heroId: 'roundtrip-1',
      createdAt: at,
      updatedAt: at,
      transitionedAt: at,
      metadata,
    });
    const loaded = await ds.getRepository(WorkflowEntity).findOneByOrFail({ id: workflow.id });
    expect(loaded.createdAt).toBeInstanceOf(Date);
    expect(loaded.createdAt.getTime()).toBe(at.getTime());
    expect(loaded.transitionedAt?.getTime()).toBe(at.getTime());
    expect(loaded.allowMultiple).toBe(false);
    expect(loaded.metadata).toEqual(metadata);
    expect(Object.keys(loaded.metadata ?? {})).toEqual(['zeta', 'alpha', 'mid']);

    const cursor = { page: 3, after: new Date('2024-12-31T23:59:59.999Z'), ids: ['b', 'a'] };
    const execution = await ds.getRepository(StepExecutionEntity).save(
      newExecution(ds, workflow.id, 'waiting', {
        cursor,
        metadata: { user: { b: 2, a: 1 }, reattemptReason: 'flow_control' },
        waitingSince: at,
        scheduledFor: at,
      }),
    );
    const reloaded = await ds
      .getRepository(StepExecutionEntity)
      .findOneByOrFail({ id: execution.id });
    expect(reloaded.cursor).toEqual(cursor);
    expect((reloaded.cursor as { after: unknown }).after).toBeInstanceOf(Date);
    expect(Object.keys(reloaded.metadata?.user ?? {})).toEqual(['b', 'a']);
    expect(reloaded.waitingSince?.getTime()).toBe(at.getTime());
    expect(reloaded.scheduledFor.getTime()).toBe(at.getTime());
    expect(reloaded.startedAt).toBeNull();

    const signal = await ds.getRepository(SignalEntity).save(newSignal(ds, workflow.id, 'rt'));
    const reloadedSignal = await ds.getRepository(SignalEntity).findOneByOrFail({ id: signal.id });
    expect(reloadedSignal.claimed).toBe(0);
    expect(reloadedSignal.payload).toBeNull();

    // JSON values that are strings which themselves read as JSON come back as those strings.
    const payloads: unknown[] = [
      '123',
      '{"x":1}',
      'true',
      'null',
      '"q"',
      7,
      false,
      [2, '1'],
      'Zürich ✓',
    ];
    for (const payload of payloads) {
      const saved = await ds
        .getRepository(SignalEntity)
        .save({ ...newSignal(ds, workflow.id, null), payload });
      const loaded = await ds.getRepository(SignalEntity).findOneByOrFail({ id: saved.id });
      expect(loaded.payload).toStrictEqual(payload);
    }
    const stringCursor = await ds
      .getRepository(StepExecutionEntity)
      .save(newExecution(ds, workflow.id, 'completed', { cursor: '42' }));
    const reloadedCursor = await ds
      .getRepository(StepExecutionEntity)
      .findOneByOrFail({ id: stringCursor.id });
    expect(reloadedCursor.cursor).toBe('42');
  });

  it('survives re-running every up() over a complete schema', async () => {
    const ds = getDataSource();
    const before = await Promise.all(TABLES.map((table) => indexNames(ds, table)));
    await rerunAllUps(ds);
    const after = await Promise.all(TABLES.map((table) => indexNames(ds, table)));
    expect(after).toEqual(before);
    expect(await ds.runMigrations()).toEqual([]);
  });
}

/** Undoes the eleven migrations one by one, checking what each leaves behind, then re-applies them. */
async function undoAllAndRedo(ds: DataSource): Promise<void> {
  const has = (table: string, column?: string): Promise<boolean> =>
    withQueryRunner(ds, (qr) => (column ? qr.hasColumn(table, column) : qr.hasTable(table)));
  const workflowIndexes = async (): Promise<string[]> => {
    const sql =
      ds.options.type === 'postgres'
        ? `SELECT indexname AS name FROM pg_indexes WHERE schemaname = COALESCE($1::text, current_schema()) AND tablename = 'geneva_drive_workflows'`
        : ds.options.type === 'better-sqlite3'
          ? `SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'geneva_drive_workflows'`
          : `SELECT DISTINCT INDEX_NAME AS name FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'geneva_drive_workflows'`;
    const schema = (ds.options as { schema?: string }).schema ?? null;
    const parameters = ds.options.type === 'postgres' ? [schema] : [];
    return (await ds.query<Array<{ name: string }>>(sql, parameters)).map((row) => row.name);
  };

  const executionIndexes = (): Promise<string[]> => indexNames(ds, 'geneva_drive_step_executions');

  const postgres = ds.options.type === 'postgres';
  expect(await workflowIndexes()).toEqual(
    expect.arrayContaining([
      INDEX_NAMES.workflowsCreated,
      INDEX_NAMES.workflowsStateCreated,
      INDEX_NAMES.workflowsHeroId,
    ]),
  );
  expect(await workflowIndexes()).not.toContain(INDEX_NAMES.workflowsStepCreated);
  expect(await workflowsFillfactor(ds)).toBe(postgres ? WORKFLOWS_FILLFACTOR : null);

  // Undoing the pending-executions migration drops its index (PostgreSQL's alone).
  expect(await executionIndexes()).toContain(
    postgres ? INDEX_NAMES.stepExecutionsPending : INDEX_NAMES.stepExecutionsWorkflowState,
  );
  await ds.undoLastMigration();
  expect(await executionIndexes()).not.toContain(INDEX_NAMES.stepExecutionsPending);
  expect(await executionIndexes()).toContain(INDEX_NAMES.stepExecutionsWorkflowState);

  // Undoing the lean-writes migration brings back the step index (an expression index,
  // PostgreSQL's alone) and the two redundant ones, the default fill factor and the full
  // execution indexes.
  expect((await workflowIndexes()).includes(INDEX_NAMES.workflowsState)).toBe(!postgres);
  await ds.undoLastMigration();
  expect((await workflowIndexes()).includes(INDEX_NAMES.workflowsStepCreated)).toBe(postgres);
  expect(await workflowIndexes()).toEqual(
    expect.arrayContaining([INDEX_NAMES.workflowsState, INDEX_NAMES.workflowsHero]),
  );
  expect(await workflowsFillfactor(ds)).toBeNull();
  if (postgres) {
    const partial = await ds.query<unknown[]>(
      `SELECT 1 FROM pg_indexes WHERE schemaname = COALESCE($1::text, current_schema())
          AND indexname IN ($2, $3, $4) AND indexdef LIKE '% WHERE %'`,
      [
        (ds.options as { schema?: string }).schema ?? null,
        INDEX_NAMES.stepExecutionsContinuesFrom,
        INDEX_NAMES.stepExecutionsSignal,
        INDEX_NAMES.stepExecutionsScheduled,
      ],
    );
    expect(partial).toEqual([]);
  }
  await ds.undoLastMigration();
  expect(await workflowIndexes()).not.toContain(INDEX_NAMES.workflowsHeroId);
  expect(await workflowIndexes()).not.toContain(INDEX_NAMES.workflowsStepCreated);
  expect(await workflowIndexes()).toContain(INDEX_NAMES.workflowsCreated);

  await ds.undoLastMigration();
  expect(await workflowIndexes()).not.toContain(INDEX_NAMES.workflowsCreated);
  expect(await workflowIndexes()).not.toContain(INDEX_NAMES.workflowsStateCreated);

  await ds.undoLastMigration();
  expect(await has('geneva_drive_workflows', 'context')).toBe(false);
  expect(await has('geneva_drive_workflows', 'trace_parent')).toBe(false);
  expect(await has('geneva_drive_step_executions', 'wait_deadline_at')).toBe(true);

  await ds.undoLastMigration();
  expect(await has('geneva_drive_step_executions', 'wait_deadline_at')).toBe(false);
  expect(await has('geneva_drive_step_executions', 'waiting_since')).toBe(true);

  // The JSON text and collation migrations change column types and collations only (MariaDB/MySQL;
  // see their own suites below).
  await ds.undoLastMigration();
  expect(await has('geneva_drive_signals', 'payload')).toBe(true);
  await ds.undoLastMigration();
  expect(await has('geneva_drive_signals')).toBe(true);
  expect(await has('geneva_drive_step_executions', 'signal_id')).toBe(true);

  await ds.undoLastMigration();
  expect(await has('geneva_drive_signals')).toBe(false);
  expect(await has('geneva_drive_step_executions', 'signal_id')).toBe(false);
  expect(await has('geneva_drive_step_executions', 'waiting_since')).toBe(false);
  expect(await has('geneva_drive_step_executions', 'cursor')).toBe(true);

  await ds.undoLastMigration();
  expect(await has('geneva_drive_step_executions', 'cursor')).toBe(false);
  expect(await has('geneva_drive_step_executions', 'continues_from_id')).toBe(false);
  expect(await has('geneva_drive_step_executions')).toBe(true);

  await ds.undoLastMigration();
  expect(await has('geneva_drive_step_executions')).toBe(false);
  expect(await has('geneva_drive_workflows')).toBe(false);

  const reapplied = await ds.runMigrations();
  expect(reapplied.map((migration) => migration.name)).toEqual(
    GENEVA_DRIVE_MIGRATIONS.map((Migration) => new Migration().name),
  );
}

describe('GENEVA_DRIVE_MIGRATIONS', () => {
  it('are eleven TypeORM-valid classes in order base, resumable, signals, NO PAD collation, JSON text, signal timeouts, workflow context, dashboard indexes, dashboard search indexes, lean step writes, pending executions index', () => {
    const names = GENEVA_DRIVE_MIGRATIONS.map((Migration) => new Migration().name ?? '');
    expect(names).toHaveLength(11);
    expect(names[10]).toBe('GenevaDrivePendingExecutionsIndex1764400010000');
    expect(names[9]).toBe('GenevaDriveLeanStepWrites1764400009000');
    expect(names[8]).toMatch(/^GenevaDriveDashboardSearchIndexes\d{13}$/);
    expect(names[7]).toMatch(/^GenevaDriveDashboardIndexes\d{13}$/);
    expect(names[5]).toMatch(/^GenevaDriveSignalTimeouts\d{13}$/);
    expect(names[6]).toBe('GenevaDriveWorkflowContext1764400006000');
    expect(names[0]).toMatch(/^GenevaDriveBaseSchema\d{13}$/);
    expect(names[1]).toMatch(/^GenevaDriveResumableSteps\d{13}$/);
    expect(names[2]).toMatch(/^GenevaDriveSignals\d{13}$/);
    expect(names[3]).toMatch(/^GenevaDriveNoPadCollation\d{13}$/);
    expect(names[4]).toMatch(/^GenevaDriveMariaDbJsonText\d{13}$/);
    const stamps = names.map((name) => Number(name.slice(-13)));
    expect([...stamps].sort((a, b) => a - b)).toEqual(stamps);
    GENEVA_DRIVE_MIGRATIONS.forEach((Migration, i) => expect(Migration.name).toBe(names[i]));
  });
});

// Each server's migration suite runs in the e2e run for that database (GENEVA_TEST_DB), so a run
// needs only its own server; the SQLite suite needs none and always runs.
describeOn('postgres')('migrations on PostgreSQL (own schema)', () => {
  const schema = `gd_mig_${randomBytes(4).toString('hex')}`;
  let ds: DataSource;

  const options: DataSourceOptions = {
    type: 'postgres',
    host: PG.host,
    port: PG.port,
    username: PG.username,
    database: PG.database,
    schema,
    entities: GENEVA_DRIVE_ENTITIES,
    migrations: GENEVA_DRIVE_MIGRATIONS,
  };

  beforeAll(async () => {
    await adminQuery(`CREATE SCHEMA "${schema}"`);
    ds = await new DataSource(options).initialize();
    const applied = await ds.runMigrations();
    expect(applied).toHaveLength(GENEVA_DRIVE_MIGRATIONS.length);
  });

  afterAll(async () => {
    if (ds?.isInitialized) await ds.destroy();
    await adminQuery(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  });

  it('creates the tables and indexes in the DataSource schema only', async () => {
    const tables = await ds.query<Array<{ table_schema: string; table_name: string }>>(
      `SELECT table_schema, table_name FROM information_schema.tables
        WHERE table_name LIKE 'geneva_drive_%' AND table_schema IN ($1, 'public')`,
      [schema],
    );
    expect(tables.map((row) => `${row.table_schema}.${row.table_name}`).sort()).toEqual(
      TABLES.map((table) => `${schema}.${table}`).sort(),
    );

    const indexes = await ds.query<Array<{ indexname: string; indexdef: string }>>(
      `SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = $1`,
      [schema],
    );
    const def = (name: string): string =>
      indexes.find((row) => row.indexname === name)?.indexdef ?? `<missing ${name}>`;
    expect(def('index_geneva_drive_workflows_unique_ongoing')).toMatch(
      /^CREATE UNIQUE INDEX .* \(type, hero_type, hero_id\) WHERE \(\(\(state\)::text <> ALL .*'finished'.*'canceled'.*\) AND \(allow_multiple = false\)\)$/,
    );
    expect(def('index_geneva_drive_step_executions_one_active')).toMatch(
      /^CREATE UNIQUE INDEX .* \(workflow_id\) WHERE .*'scheduled'.*'in_progress'/,
    );
    expect(def('index_geneva_drive_step_executions_in_progress_started_at')).toMatch(
      /^CREATE INDEX .* \(started_at\) WHERE \(\(state\)::text = 'in_progress'/,
    );
    expect(def('index_geneva_drive_signals_dedup')).toMatch(
      /^CREATE UNIQUE INDEX .* \(workflow_id, name, idempotency_key\)$/,
    );
    // Dropped again so workflow rows update in place (GenevaDriveLeanStepWrites1764400009000).
    expect(def('index_geneva_drive_workflows_step_created')).toBe(
      '<missing index_geneva_drive_workflows_step_created>',
    );
    expect(def('index_geneva_drive_step_executions_waiting_since')).toMatch(
      /^CREATE INDEX .* \(waiting_since, workflow_id\) WHERE \(\(state\)::text = 'waiting'/,
    );
    for (const name of [
      'index_geneva_drive_workflows_on_type',
      'index_geneva_drive_workflows_on_hero_id',
      'index_geneva_drive_step_executions_scheduled',
      'index_geneva_drive_step_executions_workflow_created',
      'index_geneva_drive_step_executions_workflow_state',
      'index_geneva_drive_step_executions_on_finished_at',
      'index_geneva_drive_step_executions_on_continues_from_id',
      'index_geneva_drive_step_executions_on_signal_id',
      'index_geneva_drive_signals_workflow_state',
    ]) {
      expect(def(name)).toMatch(/^CREATE INDEX /);
    }
    // Others serve their lookups (GenevaDriveLeanStepWrites1764400009000).
    for (const name of [INDEX_NAMES.workflowsState, INDEX_NAMES.workflowsHero])
      expect(def(name)).toBe(`<missing ${name}>`);
  });

  // A step's workflow UPDATE changes these columns (and the state only when the workflow's state
  // changes): an index over any of them, even through an expression or a predicate, would make
  // PostgreSQL write an entry into every index of the table at every step instead of updating the
  // row in place.
  it('indexes none of the workflow columns every step changes, and leaves room in the pages', async () => {
    const definitions = await ds.query<Array<{ definition: string }>>(
      `SELECT pg_get_indexdef(i.indexrelid) AS definition
         FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = $1 AND c.relname = 'geneva_drive_workflows'`,
      [schema],
    );
    expect(definitions.length).toBeGreaterThan(5);
    for (const { definition } of definitions) {
      expect(definition).not.toMatch(/current_step_name|next_step_name|updated_at/);
    }
    expect(await workflowsFillfactor(ds)).toBe(WORKFLOWS_FILLFACTOR);
  });

  it('indexes the executions a lookup can ask for only: sparse columns where set, scheduled ones', async () => {
    const definitions = await ds.query<Array<{ name: string; definition: string }>>(
      `SELECT indexname AS name, indexdef AS definition FROM pg_indexes
        WHERE schemaname = $1 AND tablename = 'geneva_drive_step_executions'`,
      [schema],
    );
    const def = (name: string) => definitions.find((row) => row.name === name)?.definition;
    expect(def(INDEX_NAMES.stepExecutionsContinuesFrom)).toMatch(
      /\(continues_from_id\) WHERE \(continues_from_id IS NOT NULL\)$/,
    );
    expect(def(INDEX_NAMES.stepExecutionsSignal)).toMatch(
      /\(signal_id\) WHERE \(signal_id IS NOT NULL\)$/,
    );
    expect(def(INDEX_NAMES.stepExecutionsScheduled)).toMatch(
      /\(state, scheduled_for\) WHERE \(\(state\)::text = 'scheduled'::text\)$/,
    );
    expect(def(INDEX_NAMES.stepExecutionsPending)).toMatch(
      /\(workflow_id, created_at, id\) WHERE \(\(state\)::text = ANY \(.*'scheduled'.*'waiting'.*\)\)$/,
    );
  });

  it('uses the per-driver column types of SPEC §15.5', async () => {
    const columns = await ds.query<
      Array<{
        table_name: string;
        column_name: string;
        data_type: string;
        datetime_precision: number | null;
        column_default: string | null;
      }>
    >(
      `SELECT table_name, column_name, data_type, datetime_precision, column_default
         FROM information_schema.columns WHERE table_schema = $1`,
      [schema],
    );
    const col = (table: string, column: string): (typeof columns)[number] => {
      const found = columns.find((c) => c.table_name === table && c.column_name === column);
      if (!found) throw new Error(`missing column ${table}.${column}`);
      return found;
    };
    for (const table of TABLES) {
      expect(col(table, 'id').data_type).toBe('uuid');
      expect(col(table, 'created_at')).toMatchObject({
        data_type: 'timestamp with time zone',
        datetime_precision: 3,
        column_default: null,
      });
    }
    expect(col('geneva_drive_step_executions', 'workflow_id').data_type).toBe('uuid');
    expect(col('geneva_drive_step_executions', 'continues_from_id').data_type).toBe('uuid');
    expect(col('geneva_drive_step_executions', 'signal_id').data_type).toBe('uuid');
    expect(col('geneva_drive_signals', 'workflow_id').data_type).toBe('uuid');
    expect(col('geneva_drive_workflows', 'hero_id').data_type).toBe('character varying');
    expect(col('geneva_drive_workflows', 'metadata').data_type).toBe('json');
    expect(col('geneva_drive_step_executions', 'cursor').data_type).toBe('json');
    expect(col('geneva_drive_signals', 'payload').data_type).toBe('json');
    expect(col('geneva_drive_signals', 'claimed').data_type).toBe('integer');
    expect(col('geneva_drive_workflows', 'allow_multiple')).toMatchObject({
      data_type: 'boolean',
      column_default: 'false',
    });
    expect(col('geneva_drive_step_executions', 'waiting_since').data_type).toBe(
      'timestamp with time zone',
    );
    expect(col('geneva_drive_step_executions', 'finished_at').datetime_precision).toBe(3);
  });

  describeConstraints(() => ds, { foreignKeys: true });

  it('restores what a partial run left out when up() runs again', async () => {
    await ds.query(`DROP INDEX "${schema}"."index_geneva_drive_step_executions_one_active"`);
    await ds.query(
      `ALTER TABLE "${schema}"."geneva_drive_step_executions" DROP COLUMN "waiting_since"`,
    );
    await ds.query(
      `ALTER TABLE "${schema}"."geneva_drive_signals" DROP CONSTRAINT "fk_geneva_drive_signals_workflow"`,
    );
    await rerunAllUps(ds);
    expect(await indexNames(ds, 'geneva_drive_step_executions')).toContain(
      'index_geneva_drive_step_executions_one_active',
    );
    await withQueryRunner(ds, async (qr) => {
      expect(await qr.hasColumn('geneva_drive_step_executions', 'waiting_since')).toBe(true);
      const signals = await qr.getTable('geneva_drive_signals');
      expect(signals?.foreignKeys.map((fk) => fk.onDelete)).toEqual(['CASCADE']);
    });
  });

  it('undoes all eleven migrations and applies them again', async () => {
    await undoAllAndRedo(ds);
    const leftovers = await ds.query<Array<{ indexname: string }>>(
      `SELECT indexname FROM pg_indexes WHERE schemaname = 'public' AND indexname LIKE 'index_geneva_drive_%'`,
    );
    expect(leftovers).toEqual([]);
  });
});

describeOn('postgres')('migrations on PostgreSQL (schema from search_path only)', () => {
  const schema = `gd_mig_sp_${randomBytes(4).toString('hex')}`;
  let ds: DataSource;

  beforeAll(async () => {
    await adminQuery(`CREATE SCHEMA "${schema}"`);
    ds = await new DataSource({
      type: 'postgres',
      host: PG.host,
      port: PG.port,
      username: PG.username,
      database: PG.database,
      extra: { options: `-c search_path=${schema}` },
      entities: GENEVA_DRIVE_ENTITIES,
      migrations: GENEVA_DRIVE_MIGRATIONS,
    }).initialize();
  });

  afterAll(async () => {
    if (ds?.isInitialized) await ds.destroy();
    await adminQuery(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  });

  it('lands every table and index in the search_path schema', async () => {
    expect(await ds.runMigrations()).toHaveLength(GENEVA_DRIVE_MIGRATIONS.length);
    const tables = await ds.query<Array<{ table_schema: string }>>(
      `SELECT DISTINCT table_schema FROM information_schema.tables WHERE table_name LIKE 'geneva_drive_%' AND table_schema IN ($1, 'public')`,
      [schema],
    );
    expect(tables).toEqual([{ table_schema: schema }]);
    const unique = await ds.query<Array<{ indexname: string }>>(
      `SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND indexname = 'index_geneva_drive_workflows_unique_ongoing'`,
      [schema],
    );
    expect(unique).toHaveLength(1);
    await undoAllAndRedo(ds);
  });
});

/** A PostgreSQL data source whose search_path is the one schema `quotedSchema` names. */
function searchPathDataSource(quotedSchema: string): DataSource {
  return new DataSource({
    type: 'postgres',
    host: PG.host,
    port: PG.port,
    username: PG.username,
    database: PG.database,
    // The server splits `options` on unescaped spaces.
    extra: { options: `-c search_path=${quotedSchema.replace(/ /g, '\\ ')}` },
    entities: GENEVA_DRIVE_ENTITIES,
    migrations: GENEVA_DRIVE_MIGRATIONS,
  });
}

// SPEC §16.1: a schema name from configuration is quoted, never pasted. PostgreSQL only: it is
// the family whose tables live in a configured schema (MariaDB/MySQL address the DataSource's
// database, SQLite has no schemas), so the other e2e runs skip these suites. The schema reaches
// the migrations as the connection's search_path. The name has what TypeORM 0.3 survives: it
// splits table paths on dots, and pastes a schema between quotes unescaped into its own DDL and
// catalog queries (a DataSource `schema` unlike the search_path even into every table path).
describeOn('postgres')('migrations on PostgreSQL (odd schema name: spaces, backtick)', () => {
  const schema = `gd odd schema; -- \`x\` ✓ ${randomBytes(4).toString('hex')}`;
  // Quoted by hand, independently of quoteIdentifier (test/unit/sql-identifiers.spec.ts).
  const quotedSchema = `"${schema}"`;
  let ds: DataSource;

  beforeAll(async () => {
    await adminQuery(`CREATE SCHEMA ${quotedSchema}`);
    ds = await searchPathDataSource(quotedSchema).initialize();
  });

  afterAll(async () => {
    if (ds?.isInitialized) await ds.destroy();
    await adminQuery(`DROP SCHEMA IF EXISTS ${quotedSchema} CASCADE`);
  });

  it('creates every table and index in that schema, and undoes them there', async () => {
    const [{ current }] = await ds.query<Array<{ current: string }>>(
      'SELECT current_schema() AS current',
    );
    expect(current).toBe(schema);
    expect(await ds.runMigrations()).toHaveLength(GENEVA_DRIVE_MIGRATIONS.length);

    const tables = await ds.query<Array<{ table_schema: string; table_name: string }>>(
      `SELECT table_schema, table_name FROM information_schema.tables
        WHERE table_name LIKE 'geneva_drive_%' AND table_schema IN ($1, 'public')`,
      [schema],
    );
    expect(tables.map((row) => `${row.table_schema}.${row.table_name}`).sort()).toEqual(
      TABLES.map((table) => `${schema}.${table}`).sort(),
    );
    const indexes = await ds.query<Array<{ indexname: string; indexdef: string }>>(
      `SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = $1 AND indexname LIKE 'index_geneva_drive_%'`,
      [schema],
    );
    expect(indexes).toHaveLength(19);
    expect(
      indexes.find((row) => row.indexname === 'index_geneva_drive_workflows_unique_ongoing')
        ?.indexdef,
    ).toMatch(
      /^CREATE UNIQUE INDEX .* WHERE .*'finished'.*'canceled'.* \(allow_multiple = false\)\)$/,
    );

    // The partial unique index, written with quoted column names, enforces its rule there.
    await saveWorkflow(ds, { heroId: 'odd-1' });
    await expect(saveWorkflow(ds, { heroId: 'odd-1' })).rejects.toBeInstanceOf(QueryFailedError);

    await undoAllAndRedo(ds);
  });
});

// The same with a double quote in the name. TypeORM 0.3 itself cannot work in such a schema: its
// PostgreSQL getTable() casts '"' || table_schema || '"."' || table_name || '"' to regclass (and
// dropIndex, hasTable paste the schema between quotes) without doubling the quote, so every
// TypeORM schema helper the migrations use fails there with "invalid name syntax"; on 0.3 this pins
// that the run fails cleanly (one transaction, nothing left behind). TypeORM 1.x quotes the name,
// and there the migrations create, enforce and undo everything in that schema.
describeOn('postgres')('migrations on PostgreSQL (schema name with a double quote)', () => {
  const schema = `gd "odd" schema ${randomBytes(4).toString('hex')}`;
  const quotedSchema = `"${schema.replace(/"/g, '""')}"`;
  const typeormQuotesSchemaNames = Number(readInstalledVersion('typeorm')?.split('.')[0]) >= 1;
  let ds: DataSource;

  beforeAll(async () => {
    await adminQuery(`CREATE SCHEMA ${quotedSchema}`);
    ds = await searchPathDataSource(quotedSchema).initialize();
  });

  afterAll(async () => {
    if (ds?.isInitialized) await ds.destroy();
    await adminQuery(`DROP SCHEMA IF EXISTS ${quotedSchema} CASCADE`);
  });

  async function expectCurrentSchema(): Promise<void> {
    const [{ current }] = await ds.query<Array<{ current: string }>>(
      'SELECT current_schema() AS current',
    );
    expect(current).toBe(schema);
  }

  (typeormQuotesSchemaNames ? it : it.skip)(
    'TypeORM 1.x: creates every table in that schema, enforces the unique index, undoes them',
    async () => {
      await expectCurrentSchema();
      expect(await ds.runMigrations()).toHaveLength(GENEVA_DRIVE_MIGRATIONS.length);
      const tables = await ds.query<Array<{ table_name: string }>>(
        `SELECT table_name FROM information_schema.tables
          WHERE table_schema = $1 AND table_name LIKE 'geneva_drive_%'`,
        [schema],
      );
      expect(tables.map((row) => row.table_name).sort()).toEqual([...TABLES].sort());
      await saveWorkflow(ds, { heroId: 'quote-1' });
      await expect(saveWorkflow(ds, { heroId: 'quote-1' })).rejects.toBeInstanceOf(
        QueryFailedError,
      );
      await undoAllAndRedo(ds);
    },
  );

  // Skipped on TypeORM 1.x, which lifted the limitation (the test above); run by the oldest-stack job.
  (typeormQuotesSchemaNames ? it.skip : it)(
    "TypeORM 0.3: fails in TypeORM's getTable() and leaves no table behind",
    async () => {
      await expectCurrentSchema();
      await expect(ds.runMigrations()).rejects.toThrow(/invalid name syntax/);
      const tables = await ds.query<Array<{ table_name: string }>>(
        `SELECT table_name FROM information_schema.tables WHERE table_schema = $1`,
        [schema],
      );
      expect(tables).toEqual([{ table_name: 'migrations' }]);
    },
  );
});

// The same for a MariaDB database name with a backtick, a space and SQL punctuation: every table
// path of the MariaDB migrations is quoted by quoteTable. The up()/down() methods run on a query
// runner, without runMigrations(): TypeORM 0.3 pastes the database name between backticks
// unescaped when it creates its own `migrations` table.
describeOn('mariadb')('migrations on MariaDB (database named with a backtick and spaces)', () => {
  const database = `gd \`odd\` db; -- ✓ ${randomBytes(4).toString('hex')}`;
  // Quoted by hand, independently of quoteTable (test/unit/sql-identifiers.spec.ts).
  const quotedDatabase = `\`${database.replace(/`/g, '``')}\``;
  let ds: DataSource;

  beforeAll(async () => {
    await mariadbAdminQuery(`CREATE DATABASE ${quotedDatabase} CHARACTER SET utf8mb4`);
    ds = await new DataSource({
      ...mariadbConnection,
      database,
      entities: GENEVA_DRIVE_ENTITIES,
    }).initialize();
  });

  afterAll(async () => {
    if (ds?.isInitialized) await ds.destroy();
    await mariadbAdminQuery(`DROP DATABASE IF EXISTS ${quotedDatabase}`);
  });

  it('creates the tables, keys and indexes in that database, and drops them there', async () => {
    const tablesIn = async (): Promise<string[]> =>
      (
        await ds.query<Array<{ name: string }>>(
          'SELECT TABLE_NAME AS name FROM information_schema.TABLES WHERE TABLE_SCHEMA = ?',
          [database],
        )
      )
        .map((row) => row.name)
        .sort();
    await rerunAllUps(ds);
    await rerunAllUps(ds);
    expect(await tablesIn()).toEqual([...TABLES].sort());
    const indexes = await ds.query<unknown[]>(
      `SELECT DISTINCT INDEX_NAME FROM information_schema.STATISTICS
        WHERE TABLE_SCHEMA = ? AND INDEX_NAME LIKE 'index\\_geneva\\_drive\\_%'`,
      [database],
    );
    expect(indexes).toHaveLength(19);
    await saveWorkflow(ds, { heroId: 'odd-1' });
    await expect(saveWorkflow(ds, { heroId: 'odd-1' })).rejects.toBeInstanceOf(QueryFailedError);

    await withQueryRunner(ds, async (qr) => {
      for (const Migration of [...GENEVA_DRIVE_MIGRATIONS].reverse()) {
        await new Migration().down(qr);
      }
    });
    expect(await tablesIn()).toEqual([]);
  });
});

describeOn('mariadb')('migrations on MariaDB (own database)', () => {
  const database = `gd_mig_${randomBytes(4).toString('hex')}`;
  let ds: DataSource;

  const columns = (table: string) =>
    ds.query<
      Array<{
        name: string;
        dataType: string;
        columnType: string;
        precision: number | null;
        nullable: string;
        columnDefault: string | null;
        extra: string;
        expression: string | null;
      }>
    >(
      `SELECT COLUMN_NAME AS name, DATA_TYPE AS dataType, COLUMN_TYPE AS columnType,
              DATETIME_PRECISION AS \`precision\`, IS_NULLABLE AS nullable, COLUMN_DEFAULT AS columnDefault,
              EXTRA AS extra, GENERATION_EXPRESSION AS expression
         FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?`,
      [database, table],
    );

  beforeAll(async () => {
    await mariadbAdminQuery(`CREATE DATABASE \`${database}\` CHARACTER SET utf8mb4`);
    ds = await new DataSource({
      ...mariadbConnection,
      database,
      entities: GENEVA_DRIVE_ENTITIES,
      migrations: GENEVA_DRIVE_MIGRATIONS,
    }).initialize();
    expect(await ds.runMigrations()).toHaveLength(GENEVA_DRIVE_MIGRATIONS.length);
  });

  afterAll(async () => {
    if (ds?.isInitialized) await ds.destroy();
    await mariadbAdminQuery(`DROP DATABASE IF EXISTS \`${database}\``);
  });

  it('creates the tables, the generated key columns and the indexes in the DataSource database', async () => {
    const tables = await ds.query<Array<{ name: string; collation: string }>>(
      `SELECT TABLE_NAME AS name, TABLE_COLLATION AS collation FROM information_schema.TABLES
        WHERE TABLE_SCHEMA = ? AND TABLE_NAME LIKE 'geneva\\_drive\\_%' ORDER BY TABLE_NAME`,
      [database],
    );
    expect(tables.map((row) => row.name)).toEqual([...TABLES].sort());
    expect(new Set(tables.map((row) => row.collation))).toEqual(new Set(['utf8mb4_nopad_bin']));

    const generated = [
      ...(await columns('geneva_drive_workflows')),
      ...(await columns('geneva_drive_step_executions')),
    ].filter((column) => column.expression);
    expect(generated.map((column) => [column.name, column.columnType, column.extra])).toEqual([
      ['ongoing_unique_key', 'binary(16)', 'STORED GENERATED'],
      ['active_unique_key', 'binary(16)', 'STORED GENERATED'],
    ]);
    expect(generated[0].expression).toMatch(
      /^if\(`state` not in \('finished','canceled'\) and `allow_multiple` = 0 and `hero_id` is not null,unhex\(md5\(concat_ws\(.*char\(31\).*`type`,`hero_type`,`hero_id`\)\)\),NULL\)$/,
    );
    expect(generated[1].expression).toMatch(
      /^if\(`state` in \('scheduled','in_progress'\),unhex\(md5\(/,
    );

    const indexes = await ds.query<
      Array<{ name: string; unique: string | number; columns: string }>
    >(
      `SELECT INDEX_NAME AS name, MIN(NON_UNIQUE) = 0 AS \`unique\`,
              GROUP_CONCAT(COLUMN_NAME ORDER BY SEQ_IN_INDEX) AS columns
         FROM information_schema.STATISTICS
        WHERE TABLE_SCHEMA = ? AND INDEX_NAME LIKE 'index\\_geneva\\_drive\\_%' GROUP BY INDEX_NAME`,
      [database],
    );
    const index = (name: string) => {
      const found = indexes.find((row) => row.name === name);
      return found
        ? `${Number(found.unique) ? 'UNIQUE ' : ''}(${found.columns})`
        : `<missing ${name}>`;
    };
    expect(indexes).toHaveLength(19);
    expect(index('index_geneva_drive_workflows_state_created')).toBe('(state,created_at,id)');
    expect(index('index_geneva_drive_workflows_on_hero_id')).toBe('(hero_id)');
    expect(index('index_geneva_drive_workflows_unique_ongoing')).toBe(
      'UNIQUE (ongoing_unique_key)',
    );
    expect(index('index_geneva_drive_step_executions_one_active')).toBe(
      'UNIQUE (active_unique_key)',
    );
    expect(index('index_geneva_drive_step_executions_in_progress_started_at')).toBe(
      '(state,started_at)',
    );
    expect(index('index_geneva_drive_signals_dedup')).toBe(
      'UNIQUE (workflow_id,name,idempotency_key)',
    );

    const foreignKeys = await ds.query<unknown[]>(
      'SELECT CONSTRAINT_NAME FROM information_schema.REFERENTIAL_CONSTRAINTS WHERE CONSTRAINT_SCHEMA = ?',
      [database],
    );
    expect(foreignKeys).toEqual([]);
  });

  it('uses the per-driver column types of SPEC §15.5', async () => {
    const all = new Map<string, Awaited<ReturnType<typeof columns>>[number]>();
    for (const table of TABLES) {
      for (const column of await columns(table)) all.set(`${table}.${column.name}`, column);
    }
    const col = (name: string) => {
      const found = all.get(name);
      if (!found) throw new Error(`missing column ${name}`);
      return found;
    };
    for (const table of TABLES) {
      expect(col(`${table}.id`).columnType).toBe('char(36)');
      expect(col(`${table}.created_at`)).toMatchObject({
        columnType: 'datetime(3)',
        columnDefault: null,
      });
      expect(Number(col(`${table}.created_at`).precision)).toBe(3);
    }
    expect(col('geneva_drive_step_executions.workflow_id').columnType).toBe('char(36)');
    expect(col('geneva_drive_step_executions.continues_from_id').columnType).toBe('char(36)');
    expect(col('geneva_drive_step_executions.signal_id').columnType).toBe('char(36)');
    expect(col('geneva_drive_step_executions.waiting_since').columnType).toBe('datetime(3)');
    expect(col('geneva_drive_workflows.hero_id').columnType).toBe('varchar(255)');
    expect(col('geneva_drive_workflows.allow_multiple')).toMatchObject({
      columnType: 'tinyint(1)',
      columnDefault: '0',
    });
    expect(col('geneva_drive_signals.claimed').dataType).toBe('int');
    expect(col('geneva_drive_step_executions.error_backtrace').dataType).toBe('mediumtext');
    // JSON: LONGTEXT with a named table-level JSON_VALID check, not MariaDB's json type (whose
    // column-level check, named after the column, makes mysql2 decode the values itself).
    await expectJsonText(ds, database);
  });

  describeConstraints(() => ds, { foreignKeys: false });

  it('restores what a partial run left out when up() runs again', async () => {
    await ds.query(
      'DROP INDEX `index_geneva_drive_step_executions_one_active` ON `geneva_drive_step_executions`',
    );
    await ds.query('ALTER TABLE `geneva_drive_workflows` DROP COLUMN `ongoing_unique_key`');
    await ds.query('ALTER TABLE `geneva_drive_step_executions` DROP COLUMN `waiting_since`');
    expect(await indexNames(ds, 'geneva_drive_workflows')).not.toContain(
      'index_geneva_drive_workflows_unique_ongoing',
    );
    await rerunAllUps(ds);
    expect(await indexNames(ds, 'geneva_drive_step_executions')).toContain(
      'index_geneva_drive_step_executions_one_active',
    );
    expect(await indexNames(ds, 'geneva_drive_workflows')).toContain(
      'index_geneva_drive_workflows_unique_ongoing',
    );
    await withQueryRunner(ds, async (qr) => {
      expect(await qr.hasColumn('geneva_drive_step_executions', 'waiting_since')).toBe(true);
      expect(await qr.hasColumn('geneva_drive_workflows', 'ongoing_unique_key')).toBe(true);
    });
    // The rebuilt key enforces the rule again.
    await saveWorkflow(ds, { heroId: 'rebuilt-1' });
    await expect(saveWorkflow(ds, { heroId: 'rebuilt-1' })).rejects.toBeInstanceOf(
      QueryFailedError,
    );
  });

  it('undoes all eleven migrations and applies them again', async () => {
    await undoAllAndRedo(ds);
    const tables = await ds.query<Array<{ name: string }>>(
      'SELECT TABLE_NAME AS name FROM information_schema.TABLES WHERE TABLE_SCHEMA = ?',
      [database],
    );
    // No typeorm_metadata: the generated columns are plain SQL, unknown to TypeORM's bookkeeping.
    expect(tables.map((row) => row.name).sort()).toEqual(['migrations', ...TABLES].sort());
  });
});

// GenevaDriveNoPadCollation1764400003000 (MariaDB/MySQL only: PostgreSQL and SQLite compare text
// exactly and the migration does nothing there, so the other e2e runs skip this suite; their
// describeConstraints above pin the same trailing-space rules). utf8mb4_bin is PAD SPACE: 'a' and
// 'a ' are equal to it, in lookups and in unique indexes. The old schema is what down() restores.
describeOn('mariadb')('migrations on MariaDB (NO PAD collation of the text columns)', () => {
  const database = `gd_nopad_${randomBytes(4).toString('hex')}`;
  const migration = new GenevaDriveNoPadCollation1764400003000();
  let ds: DataSource;

  /** Everything information_schema says about the library's tables, collations apart or not. */
  const catalog = async ({ withCollations }: { withCollations: boolean }) => {
    const select = (sql: string) => ds.query<Array<Record<string, unknown>>>(sql, [database]);
    const tables = await select(
      `SELECT TABLE_NAME AS tableName, TABLE_COLLATION AS collation FROM information_schema.TABLES
        WHERE TABLE_SCHEMA = ? AND TABLE_NAME LIKE 'geneva\\_drive\\_%' ORDER BY TABLE_NAME`,
    );
    const columns = await select(
      `SELECT TABLE_NAME AS tableName, COLUMN_NAME AS name, ORDINAL_POSITION AS position,
              COLUMN_TYPE AS columnType, IS_NULLABLE AS nullable, COLUMN_DEFAULT AS columnDefault,
              CHARACTER_SET_NAME AS charset, COLLATION_NAME AS collation, EXTRA AS extra,
              GENERATION_EXPRESSION AS expression
         FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? ORDER BY TABLE_NAME, ORDINAL_POSITION`,
    );
    const indexes = await select(
      `SELECT TABLE_NAME AS tableName, INDEX_NAME AS name, NON_UNIQUE AS nonUnique,
              SEQ_IN_INDEX AS seq, COLUMN_NAME AS columnName
         FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = ?
        ORDER BY TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX`,
    );
    const checks = await select(
      `SELECT TABLE_NAME AS tableName, CHECK_CLAUSE AS clause FROM information_schema.CHECK_CONSTRAINTS
        WHERE CONSTRAINT_SCHEMA = ? ORDER BY TABLE_NAME, CONSTRAINT_NAME`,
    );
    const strip = (rows: Array<Record<string, unknown>>) =>
      withCollations ? rows : rows.map(({ collation: _collation, ...rest }) => rest);
    return { tables: strip(tables), columns: strip(columns), indexes, checks };
  };

  /** `table.column` → collation, for every column that has one. */
  const collations = async (): Promise<Record<string, string>> => {
    const rows = await ds.query<Array<{ tableName: string; name: string; collation: string }>>(
      `SELECT TABLE_NAME AS tableName, COLUMN_NAME AS name, COLLATION_NAME AS collation
         FROM information_schema.COLUMNS
        WHERE TABLE_SCHEMA = ? AND TABLE_NAME LIKE 'geneva\\_drive\\_%' AND COLLATION_NAME IS NOT NULL`,
      [database],
    );
    return Object.fromEntries(rows.map((row) => [`${row.tableName}.${row.name}`, row.collation]));
  };
  const tableCollations = async (): Promise<string[]> =>
    (
      await ds.query<Array<{ collation: string }>>(
        `SELECT TABLE_COLLATION AS collation FROM information_schema.TABLES
          WHERE TABLE_SCHEMA = ? AND TABLE_NAME LIKE 'geneva\\_drive\\_%'`,
        [database],
      )
    ).map((row) => row.collation);

  const JSON_COLUMNS = [
    'geneva_drive_workflows.metadata',
    'geneva_drive_workflows.context',
    'geneva_drive_step_executions.metadata',
    'geneva_drive_step_executions.cursor',
    'geneva_drive_signals.payload',
  ];

  const clearTables = async () => {
    for (const table of [...TABLES].reverse()) await ds.query(`DELETE FROM \`${table}\``);
  };

  /** The rows a PAD SPACE collation confuses: keys and hero ids that differ by trailing spaces. */
  const expectTrailingSpacesDistinct = async () => {
    const signals = ds.getRepository(SignalEntity);
    const executions = ds.getRepository(StepExecutionEntity);
    // The ongoing-per-hero key (stored generated column) and the hero index.
    const twin = await saveWorkflow(ds, { heroId: 'twin' });
    const twinSpaced = await saveWorkflow(ds, { heroId: 'twin ' });
    await expect(saveWorkflow(ds, { heroId: 'twin ' })).rejects.toBeInstanceOf(QueryFailedError);
    await expect(saveWorkflow(ds, { heroId: 'twin' })).rejects.toBeInstanceOf(QueryFailedError);
    expect(
      (await ds.getRepository(WorkflowEntity).findBy({ heroType: 'Order', heroId: 'twin' })).map(
        (w) => w.id,
      ),
    ).toEqual([twin.id]);
    expect(
      (await ds.getRepository(WorkflowEntity).findBy({ heroId: 'twin ' })).map((w) => w.id),
    ).toEqual([twinSpaced.id]);
    expect(await ds.getRepository(WorkflowEntity).countBy({ type: 'OrderWorkflow ' })).toBe(0);
    // The signal dedupe index and the duplicate-signal lookup.
    await signals.save(newSignal(ds, twin.id, 'a'));
    await signals.save(newSignal(ds, twin.id, 'a '));
    await expect(signals.save(newSignal(ds, twin.id, 'a '))).rejects.toBeInstanceOf(
      QueryFailedError,
    );
    expect(
      (await signals.findBy({ workflowId: twin.id, name: 'paid', idempotencyKey: 'a' })).map(
        (signal) => signal.idempotencyKey,
      ),
    ).toEqual(['a']);
    expect(await signals.countBy({ workflowId: twin.id, name: 'paid ' })).toBe(0);
    // The one-active-execution key (stored generated column), step names in lookups.
    await executions.save(newExecution(ds, twin.id, 'scheduled', { stepName: 'reserve ' }));
    await expect(executions.save(newExecution(ds, twin.id, 'in_progress'))).rejects.toBeInstanceOf(
      QueryFailedError,
    );
    expect(await executions.countBy({ workflowId: twin.id, stepName: 'reserve' })).toBe(0);
    expect(await executions.countBy({ workflowId: twinSpaced.id })).toBe(0);
  };

  beforeAll(async () => {
    await mariadbAdminQuery(`CREATE DATABASE \`${database}\` CHARACTER SET utf8mb4`);
    ds = await new DataSource({
      ...mariadbConnection,
      database,
      entities: GENEVA_DRIVE_ENTITIES,
      migrations: GENEVA_DRIVE_MIGRATIONS,
    }).initialize();
    expect(await ds.runMigrations()).toHaveLength(GENEVA_DRIVE_MIGRATIONS.length);
  });

  afterAll(async () => {
    if (ds?.isInitialized) await ds.destroy();
    await mariadbAdminQuery(`DROP DATABASE IF EXISTS \`${database}\``);
  });

  afterEach(clearTables);

  it('creates every text column and table NO PAD (utf8mb4_nopad_bin); JSON stays utf8mb4_bin', async () => {
    const found = await collations();
    expect(Object.keys(found).length).toBeGreaterThan(JSON_COLUMNS.length);
    for (const [column, collation] of Object.entries(found)) {
      expect([column, collation]).toEqual([
        column,
        JSON_COLUMNS.includes(column) ? 'utf8mb4_bin' : 'utf8mb4_nopad_bin',
      ]);
    }
    expect(new Set(await tableCollations())).toEqual(new Set(['utf8mb4_nopad_bin']));
  });

  it("keeps 'a' and 'a ' apart in the unique keys, the dedupe index and lookups", async () => {
    await expectTrailingSpacesDistinct();
  });

  it('converts a utf8mb4_bin schema (what down() restores) to the one a new install gets', async () => {
    const fresh = await catalog({ withCollations: true });
    // Re-running up() over a converted schema changes nothing.
    await withQueryRunner(ds, (qr) => migration.up(qr));
    expect(await catalog({ withCollations: true })).toEqual(fresh);

    await withQueryRunner(ds, (qr) => migration.down(qr));
    // The old schema: every text column and table utf8mb4_bin, nothing else changed.
    expect(new Set(Object.values(await collations()))).toEqual(new Set(['utf8mb4_bin']));
    expect(new Set(await tableCollations())).toEqual(new Set(['utf8mb4_bin']));
    const old = await catalog({ withCollations: false });
    expect(old.columns).toEqual(fresh.columns.map(({ collation: _collation, ...rest }) => rest));
    expect([old.indexes, old.checks]).toEqual([fresh.indexes, fresh.checks]);
    // Under PAD SPACE the bug is back: 'a ' is taken for 'a'.
    const workflow = await saveWorkflow(ds, { heroId: 'pad-1' });
    await ds.getRepository(SignalEntity).save(newSignal(ds, workflow.id, 'a'));
    await expect(
      ds.getRepository(SignalEntity).save(newSignal(ds, workflow.id, 'a ')),
    ).rejects.toBeInstanceOf(QueryFailedError);
    await clearTables();

    // A schema that is partly NO PAD (a table's default and one column: no stored generated
    // column uses step_name, so it can change alone) is completed by up().
    await withQueryRunner(ds, (qr) =>
      mysqlEnsureCollation(
        qr,
        'geneva_drive_step_executions',
        [new TableColumn({ name: 'step_name', type: 'varchar', length: '255' })],
        'utf8mb4_nopad_bin',
      ),
    );
    expect((await collations())['geneva_drive_step_executions.step_name']).toBe(
      'utf8mb4_nopad_bin',
    );
    expect((await collations())['geneva_drive_step_executions.state']).toBe('utf8mb4_bin');
    await withQueryRunner(ds, (qr) => migration.up(qr));
    expect(await catalog({ withCollations: true })).toEqual(fresh);
    await withQueryRunner(ds, (qr) => migration.up(qr));
    expect(await catalog({ withCollations: true })).toEqual(fresh);
    await expectTrailingSpacesDistinct();
    expect(await ds.runMigrations()).toEqual([]);
  });

  it("down() refuses while 'a' and 'a ' share a unique index, and changes nothing", async () => {
    const fresh = await catalog({ withCollations: true });
    const workflow = await saveWorkflow(ds, { heroId: 'refuse-1' });
    await ds.getRepository(SignalEntity).save(newSignal(ds, workflow.id, 'a'));
    await ds.getRepository(SignalEntity).save(newSignal(ds, workflow.id, 'a '));
    await expect(withQueryRunner(ds, (qr) => migration.down(qr))).rejects.toThrow(
      /Duplicate entry/,
    );
    expect(await catalog({ withCollations: true })).toEqual(fresh);
  });
});

describe('migrations on SQLite (better-sqlite3, in memory)', () => {
  let ds: DataSource;

  beforeAll(async () => {
    ds = await new DataSource({
      type: 'better-sqlite3',
      database: ':memory:',
      entities: GENEVA_DRIVE_ENTITIES,
      migrations: GENEVA_DRIVE_MIGRATIONS,
    }).initialize();
    expect(await ds.runMigrations()).toHaveLength(GENEVA_DRIVE_MIGRATIONS.length);
  });

  afterAll(async () => {
    if (ds?.isInitialized) await ds.destroy();
  });

  it('creates the partial unique indexes', async () => {
    const rows = await ds.query<Array<{ name: string; sql: string }>>(
      `SELECT name, sql FROM sqlite_master WHERE type = 'index' AND name LIKE 'index_geneva_drive_%'`,
    );
    const sql = (name: string): string => rows.find((row) => row.name === name)?.sql ?? '';
    expect(sql('index_geneva_drive_workflows_unique_ongoing')).toMatch(
      /CREATE UNIQUE INDEX .* WHERE "state" NOT IN \('finished', 'canceled'\) AND "allow_multiple" = 0/,
    );
    expect(sql('index_geneva_drive_step_executions_one_active')).toMatch(
      /CREATE UNIQUE INDEX .* WHERE/,
    );
    expect(sql('index_geneva_drive_step_executions_waiting_since')).toMatch(
      /CREATE INDEX .* WHERE "state" = 'waiting'/,
    );
    expect(rows).toHaveLength(20);
  });

  describeConstraints(() => ds, { foreignKeys: true });

  it('undoes all eleven migrations and applies them again', async () => {
    await undoAllAndRedo(ds);
    const rows = await ds.query<Array<{ name: string }>>(
      `SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE 'index_geneva_drive_%'`,
    );
    expect(rows).toHaveLength(20);
  });
});

// GenevaDriveMariaDbJsonText1764400004000 (MariaDB only). The schema before it, MariaDB's json type,
// is what down() restores: there mysql2 decodes the values itself (the server marks the column
// JSON), so TypeORM's json column type decoded them a second time.
describeOn('mariadb')('migrations on MariaDB (JSON columns as text)', () => {
  const database = `gd_json_${randomBytes(4).toString('hex')}`;
  const migration = new GenevaDriveMariaDbJsonText1764400004000();
  let ds: DataSource;

  const withRunner = <T>(fn: (qr: QueryRunner) => Promise<T>) => withQueryRunner(ds, fn);

  /** Values that are strings reading as JSON, or keep their key order, written and read back. */
  const expectRoundTrips = async () => {
    const workflow = await saveWorkflow(ds, {
      heroId: `json-${uuidv7()}`,
      metadata: { zeta: '1', alpha: 'true' },
    });
    const loaded = await ds.getRepository(WorkflowEntity).findOneByOrFail({ id: workflow.id });
    expect(loaded.metadata).toStrictEqual({ zeta: '1', alpha: 'true' });
    expect(Object.keys(loaded.metadata ?? {})).toEqual(['zeta', 'alpha']);
    for (const payload of ['123', 'true', 'null', '"q"', '[1]', '{"x":1}', 12, null]) {
      const saved = await ds
        .getRepository(SignalEntity)
        .save({ ...newSignal(ds, workflow.id, null), payload });
      const read = await ds.getRepository(SignalEntity).findOneByOrFail({ id: saved.id });
      expect([payload, read.payload]).toStrictEqual([payload, payload]);
    }
    const execution = await ds
      .getRepository(StepExecutionEntity)
      .save(newExecution(ds, workflow.id, 'completed', { cursor: '42', metadata: { n: '7' } }));
    const read = await ds.getRepository(StepExecutionEntity).findOneByOrFail({ id: execution.id });
    expect([read.cursor, read.metadata]).toStrictEqual(['42', { n: '7' }]);
  };

  beforeAll(async () => {
    await mariadbAdminQuery(`CREATE DATABASE \`${database}\` CHARACTER SET utf8mb4`);
    ds = await new DataSource({
      ...mariadbConnection,
      database,
      entities: GENEVA_DRIVE_ENTITIES,
      migrations: GENEVA_DRIVE_MIGRATIONS,
    }).initialize();
    expect(await ds.runMigrations()).toHaveLength(GENEVA_DRIVE_MIGRATIONS.length);
  });

  afterAll(async () => {
    if (ds?.isInitialized) await ds.destroy();
    await mariadbAdminQuery(`DROP DATABASE IF EXISTS \`${database}\``);
  });

  it('new installs get the text storage from the earlier migrations; the values round-trip', async () => {
    await expectJsonText(ds, database);
    await checkMariaDbJsonColumns(ds);
    await expectRoundTrips();
  });

  it('keeps the values valid JSON (the named check)', async () => {
    const workflow = await saveWorkflow(ds, { heroId: `json-${uuidv7()}` });
    await expect(
      ds.query('UPDATE `geneva_drive_workflows` SET `metadata` = ? WHERE `id` = ?', [
        'not json',
        workflow.id,
      ]),
    ).rejects.toThrow(/CONSTRAINT .*geneva_drive_workflows_metadata_is_json/);
  });

  it('converts the json type of an older install, keeping the stored text; boot refuses it before', async () => {
    await withRunner((qr) => migration.down(qr));
    const checks = await mariadbChecks(ds, database);
    for (const path of JSON_COLUMN_PATHS)
      expect([path, checks.get(path)]).toEqual([path, expect.stringMatching(/^json_valid/)]);
    const workflow = await saveWorkflow(ds, { heroId: `json-${uuidv7()}`, metadata: { k: '1' } });
    await expect(checkMariaDbJsonColumns(ds)).rejects.toThrow(MissingMigrationError);
    await expect(checkMariaDbJsonColumns(ds)).rejects.toThrow(
      /geneva_drive_signals\.payload, geneva_drive_step_executions\.cursor, geneva_drive_step_executions\.metadata, geneva_drive_workflows\.metadata .*GenevaDriveMariaDbJsonText1764400004000/,
    );

    await withRunner((qr) => migration.up(qr));
    await expectJsonText(ds, database);
    await checkMariaDbJsonColumns(ds);
    const [row] = await ds.query<Array<{ metadata: string }>>(
      'SELECT `metadata` FROM `geneva_drive_workflows` WHERE `id` = ?',
      [workflow.id],
    );
    expect(row.metadata).toBe('{"k":"1"}');
    await expectRoundTrips();
    // Done: a second run changes nothing.
    await withRunner((qr) => migration.up(qr));
    await expectJsonText(ds, database);
  });
});
