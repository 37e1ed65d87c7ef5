import type { DataSource } from 'typeorm';
import {
  InvalidArgumentError,
  SignalEntity,
  StepExecutionEntity,
  StepNotDefinedError,
  WorkflowEntity,
  WorkflowNotFoundError,
  WorkflowAlreadyOngoingError,
  WorkflowNotOngoingError,
  type WorkflowService,
  type WorkflowState,
} from '../../../lib';
import { HostileHero } from '../../fixtures/hostile-hero.entity';
import {
  cursorOf,
  GATE_SIGNAL,
  HOSTILE_JSON,
  HOSTILE_TEXT,
  HostileHeroWorkflow,
  hostileError,
  keyOf,
  LONE_SURROGATES,
  MEGABYTE_VALUES,
  QUOTED_STEP_NAME,
  SECURITY_WORKFLOWS,
  SecurityProbe,
  SignalTargetWorkflow,
  StartMetadataWorkflow,
  SteerableWorkflow,
  StepErrorWorkflow,
  StepMetadataWorkflow,
  CursorWorkflow,
  UNSTORABLE_TEXT,
  type HostileValue,
} from '../../fixtures/security.workflows';
import {
  createSchema,
  dropSchema,
  testDatabase,
  testDatabaseLabel,
  testPooler,
} from '../support/database';
import { testTransport } from '../support/transport';
import { EngineHarness } from '../support/engine-harness';
import { testPrefix, testRedisLabel } from '../support/redis';
import {
  asStoredText,
  canaryProblem,
  createCanary,
  DEFAULT_SETTING,
  ENCODING_FAILURE,
  isAscii,
  isEncodingError,
  POSTGRES_SETTINGS,
  postgresExtra,
  restoreCanary,
  RunObserver,
  TableReader,
  withoutLoneSurrogates,
  type SessionSetting,
  type Settlement,
} from './hostile-support';

/**
 * Hostile values through every public entry point that stores one, on the real module (BullMQ on
 * Redis, the GENEVA_TEST_DB database), under several PostgreSQL session settings. Each time:
 * the value comes back byte for byte through WorkflowService and through a parameterized query of
 * our own (or the call is refused with InvalidArgumentError and writes nothing), the workflow
 * reaches the state it should, and the `canary` table still holds its row (afterEach).
 *
 * Under `client_encoding = SJIS` node-postgres still sends and decodes UTF-8, so only ASCII is
 * guaranteed byte-exact there: a non-ASCII value may instead be refused by the server (bytes that
 * are no SJIS, or JSON that no longer parses once decoded as SJIS: `ENCODING_FAILURE`), provided
 * nothing is then written. Any other failure (a syntax error, a wrong parameter count, a canceled
 * workflow whose hero was not found, a dropped canary) is what a value rendered into SQL text does,
 * and fails the test. On PostgreSQL every app's `search_path` is its test schema, so an injected
 * `DROP TABLE canary` would find the canary.
 */
const SETTINGS: readonly SessionSetting[] =
  testDatabase === 'postgres' ? POSTGRES_SETTINGS : [DEFAULT_SETTING];

const ONGOING_OR_DONE: readonly WorkflowState[] = ['finished', 'paused', 'canceled'];

/** Values that one run takes together; under a lossy encoding each non-ASCII value runs alone. */
interface ValueGroup {
  values: readonly HostileValue[];
  /** An encoding error (and nothing written) is an acceptable outcome. */
  mayFailToEncode: boolean;
}

/**
 * The runs of a matrix: all values in one, or under a lossy encoding the values that are ASCII as
 * stored (`stored`: how the column keeps them) in one and every other value alone, so that one
 * value's encoding failure hides nothing about another.
 */
function groupsOf(
  values: readonly HostileValue[],
  setting: SessionSetting,
  stored: (value: string) => string = (value) => value,
): Array<[string, ValueGroup]> {
  if (!setting.lossy)
    return [[`${values.length} values in one run`, { values, mayFailToEncode: false }]];
  const groups: Array<[string, ValueGroup]> = [];
  const ascii = values.filter(({ value }) => isAscii(stored(value)));
  if (ascii.length > 0)
    groups.push([
      `${ascii.length} ASCII values in one run`,
      { values: ascii, mayFailToEncode: false },
    ]);
  for (const value of values) {
    if (!isAscii(stored(value.value)))
      groups.push([value.label, { values: [value], mayFailToEncode: true }]);
  }
  return groups;
}

/** What signal() and signals() say about a signal (`duplicateDelivery` is false on reads). */
function fieldsOf(signal: SignalEntity) {
  const { workflowId, name, idempotencyKey, payload, state, duplicateDelivery } = signal;
  return { workflowId, name, idempotencyKey, payload, state, duplicateDelivery };
}

/** The error a typed refusal of resumeAt() may be. */
function isTypedStepRefusal(error: unknown): boolean {
  return error instanceof StepNotDefinedError || error instanceof InvalidArgumentError;
}

// Session settings (and search_path) travel in the startup packet's `options`, which PgBouncer
// refuses, and would not follow a transaction to another server connection: skipped through it.
// The run observer listens to the `@nestjs/bullmq` workers of the Redis transport: skipped on the
// PostgreSQL and local transports (its values reach SQL through the same statements either way).
(testPooler === null && testTransport === 'redis' ? describe : describe.skip).each(
  SETTINGS.map((setting): [string, SessionSetting] => [setting.label, setting]),
)(`hostile values (${testDatabaseLabel}, %s, BullMQ on ${testRedisLabel})`, (_label, setting) => {
  let harness: EngineHarness | undefined;
  let schema: string;
  let observer: RunObserver;
  let service: WorkflowService;
  let probe: SecurityProbe;
  let reader: TableReader;
  let dataSource: DataSource;

  beforeAll(async () => {
    schema = await createSchema('gd_security');
    observer = new RunObserver();
    try {
      harness = await EngineHarness.boot({
        workflows: SECURITY_WORKFLOWS,
        providers: [SecurityProbe],
        entities: [HostileHero],
        options: {
          errorReporter: observer.errorReporter,
          // Room for the 1 MiB values (their JSON is larger: quotes and backslashes are escaped).
          maxSignalPayloadSize: 4 * 2 ** 20,
          maxCursorSize: 4 * 2 ** 20,
        },
        reuse: { schema, prefix: testPrefix('gd-security') },
        extra: testDatabase === 'postgres' ? postgresExtra(setting, schema) : undefined,
      });
    } catch (error) {
      await dropSchema(schema);
      throw error;
    }
    service = harness.service;
    observer.watchWorkers(harness.app, async (id) => (await service.find(id))?.state ?? null);
    probe = harness.get(SecurityProbe);
    dataSource = harness.dataSource;
    reader = new TableReader(dataSource);
    // The setting is in force on the app's connections, not merely requested.
    for (const [name, value] of Object.entries(setting.expected)) {
      const rows = await dataSource.query<Array<Record<string, string>>>(`SHOW ${name}`);
      expect(rows[0][name]).toBe(value);
    }
    await createCanary(dataSource);
  });

  afterEach(async () => {
    if (!harness) return;
    const problem = await canaryProblem(dataSource);
    if (!problem) return;
    await restoreCanary(dataSource);
    throw new Error(`The canary was damaged during this test: ${problem}.`);
  });

  afterAll(async () => {
    observer?.close();
    await harness?.close();
  });

  /** An encoding error is acceptable only where the group allows it. */
  function expectEncodingErrorAllowed(group: ValueGroup, error: unknown): void {
    if (group.mayFailToEncode && isEncodingError(error)) return;
    throw error;
  }

  /** The settlement is a clean encoding failure of a group that allows one (else the expected state). */
  function cleanEncodingFailure(
    group: ValueGroup,
    outcome: Settlement,
    state: WorkflowState,
  ): boolean {
    if (group.mayFailToEncode && outcome.kind !== 'settled' && isEncodingError(outcome.error))
      return true;
    expect(outcome).toEqual({ kind: 'settled', state });
    return false;
  }

  // ───────────────────────────── start(): hero ids ─────────────────────────────

  describe('start() with a string-keyed hero', () => {
    const saveHero = (id: string) =>
      dataSource
        .getRepository(HostileHero)
        .save(Object.assign(new HostileHero(), { id, label: id }));

    async function runHero(hero: HostileHero): Promise<WorkflowEntity> {
      const since = observer.mark();
      const workflow = await service.start(HostileHeroWorkflow, { hero });
      expect(await observer.settled(workflow.id, ONGOING_OR_DONE, since)).toEqual({
        kind: 'settled',
        state: 'finished',
      });
      return workflow;
    }

    const heroIds = HOSTILE_TEXT.map((value): [string, HostileValue] => [value.label, value]);

    it.each(heroIds)(
      'keeps the hero id %s, loads the hero by it and finds the workflow by it',
      async (_name, hostile) => {
        const group: ValueGroup = {
          values: [hostile],
          mayFailToEncode: setting.lossy && !isAscii(hostile.value),
        };
        const id = hostile.value;
        let hero: HostileHero;
        try {
          hero = await saveHero(id);
        } catch (error) {
          return expectEncodingErrorAllowed(group, error);
        }
        const workflowsBefore = await reader.count(WorkflowEntity);
        const since = observer.mark();
        let workflow: WorkflowEntity;
        try {
          workflow = await service.start(HostileHeroWorkflow, { hero });
        } catch (error) {
          expectEncodingErrorAllowed(group, error);
          expect(await reader.count(WorkflowEntity)).toBe(workflowsBefore);
          return;
        }
        expect(workflow.heroId).toBe(id);
        const outcome = await observer.settled(workflow.id, ONGOING_OR_DONE, since);
        if (cleanEncodingFailure(group, outcome, 'finished')) return;

        // Both steps saw the hero: each loaded it in its own prepare (the second chained in process).
        expect(probe.seenBy(workflow.id)).toStrictEqual([
          { step: 'greet', id, label: id },
          { step: 'again', id, label: id },
        ]);
        const found = await service.find(workflow.id);
        expect([found?.heroType, found?.heroId, found?.state]).toStrictEqual([
          'HostileHero',
          id,
          'finished',
        ]);
        expect(
          (await service.list({ workflow: HostileHeroWorkflow, hero })).map((w) => w.id),
        ).toStrictEqual([workflow.id]);
        expect(
          (await service.executionHistory(workflow)).map((e) => [e.stepName, e.state]),
        ).toStrictEqual([
          ['greet', 'completed'],
          ['again', 'completed'],
        ]);
        expect(
          await reader.rows(
            WorkflowEntity,
            { text: ['id', 'hero_type', 'hero_id'] },
            { hero_id: id },
          ),
        ).toStrictEqual([{ id: workflow.id, hero_type: 'HostileHero', hero_id: id }]);
      },
    );

    const refusedIds = [...UNSTORABLE_TEXT, { label: 'an empty string', value: '' }].map(
      (value): [string, HostileValue] => [value.label, value],
    );

    it.each(refusedIds)(
      'refuses the hero id %s with InvalidArgumentError, writing nothing',
      async (_name, hostile) => {
        const workflowsBefore = await reader.count(WorkflowEntity);
        const hero = Object.assign(new HostileHero(), { id: hostile.value, label: 'unsaved' });
        await expect(service.start(HostileHeroWorkflow, { hero })).rejects.toThrow(
          InvalidArgumentError,
        );
        await expect(service.list({ hero })).rejects.toThrow(InvalidArgumentError);
        await expect(service.findOngoing(HostileHeroWorkflow, hero)).rejects.toThrow(
          InvalidArgumentError,
        );
        expect(await reader.count(WorkflowEntity)).toBe(workflowsBefore);
      },
    );

    // One INSERT per table on PostgreSQL, every row in one JSON parameter (json_populate_recordset),
    // and the ongoing heroes read with their ids in one array parameter.
    it.each(groupsOf(HOSTILE_TEXT, setting))(
      'startMany() keeps every hero id and metadata value of %s, and skips a hero ongoing by its id',
      async (_name, group) => {
        const heroes: HostileHero[] = [];
        try {
          for (const { value } of group.values) heroes.push(await saveHero(value));
        } catch (error) {
          return expectEncodingErrorAllowed(group, error);
        }
        const workflowsBefore = await reader.count(WorkflowEntity);
        const waiting = { stepJobOptions: { wait: '1h' } } as const;
        const entries = heroes.map((hero, index) => ({
          hero,
          metadata: { [keyOf(group.values[index])]: group.values[index].value },
          ...waiting,
        }));
        let ongoing: WorkflowEntity | null = null;
        let created: Array<WorkflowEntity | null>;
        try {
          ongoing = await service.start(HostileHeroWorkflow, { hero: heroes[0], ...waiting });
          created = await service.startMany(HostileHeroWorkflow, entries, { onConflict: 'skip' });
        } catch (error) {
          expectEncodingErrorAllowed(group, error);
          if (ongoing) await service.cancel(ongoing);
          expect(await reader.count(WorkflowEntity)).toBe(workflowsBefore + (ongoing ? 1 : 0));
          return;
        }
        expect(created[0]).toBeNull();
        for (const [index, row] of created.entries()) {
          if (index === 0) continue;
          const { value } = group.values[index];
          expect(row?.heroId).toBe(value);
          expect(
            await reader.rows(
              WorkflowEntity,
              { text: ['hero_id'], json: ['metadata'] },
              { id: row!.id },
            ),
          ).toStrictEqual([
            {
              hero_id: value,
              metadata: { [keyOf(group.values[index])]: value, stepJobOptions: { wait: '1h' } },
            },
          ]);
        }
        // Every hero is ongoing now: 'error' refuses the whole call and writes nothing.
        const workflowsNow = await reader.count(WorkflowEntity);
        await expect(service.startMany(HostileHeroWorkflow, entries)).rejects.toThrow(
          WorkflowAlreadyOngoingError,
        );
        expect(await reader.count(WorkflowEntity)).toBe(workflowsNow);
        for (const row of [ongoing, ...created]) if (row) await service.cancel(row);
      },
    );

    it('tells apart hero ids that differ only by trailing spaces or case', async () => {
      const ids = ['twin', 'twin ', 'twin  ', 'TWIN'];
      const heroes = await Promise.all(ids.map(saveHero));
      const workflows: WorkflowEntity[] = [];
      for (const hero of heroes) workflows.push(await runHero(hero));
      for (const [index, hero] of heroes.entries()) {
        expect((await service.list({ hero })).map((w) => w.id)).toStrictEqual([
          workflows[index].id,
        ]);
        expect((await service.find(workflows[index].id))?.heroId).toBe(ids[index]);
      }
    });
  });

  // ───────────────────────────── start(): metadata ─────────────────────────────

  describe('start() metadata', () => {
    const metadataOf = (values: readonly HostileValue[]) => ({
      ...Object.fromEntries(values.map((value) => [keyOf(value), value.value])),
      'all values': values.map(({ value }) => value),
    });

    it.each(groupsOf(HOSTILE_JSON, setting))(
      'keeps hostile keys and values (%s)',
      async (_name, group) => {
        const metadata = metadataOf(group.values);
        const workflowsBefore = await reader.count(WorkflowEntity);
        const since = observer.mark();
        let workflow: WorkflowEntity;
        try {
          workflow = await service.start(StartMetadataWorkflow, { metadata });
        } catch (error) {
          expectEncodingErrorAllowed(group, error);
          expect(await reader.count(WorkflowEntity)).toBe(workflowsBefore);
          return;
        }
        const outcome = await observer.settled(workflow.id, ONGOING_OR_DONE, since);
        if (cleanEncodingFailure(group, outcome, 'finished')) return;

        expect(probe.seenBy(workflow.id)).toStrictEqual([metadata]);
        expect((await service.find(workflow.id))?.metadata).toStrictEqual(metadata);
        expect(
          await reader.rows(WorkflowEntity, { json: ['metadata'] }, { id: workflow.id }),
        ).toStrictEqual([{ metadata }]);
        // An operator verb rewrites the metadata: it must come through again.
        const withJobOptions = { ...metadata, stepJobOptions: { priority: 7 } };
        expect((await service.setStepJobOptions(workflow, { priority: 7 })).metadata).toStrictEqual(
          withJobOptions,
        );
        expect(
          await reader.rows(WorkflowEntity, { json: ['metadata'] }, { id: workflow.id }),
        ).toStrictEqual([{ metadata: withJobOptions }]);
      },
    );

    it('refuses lone surrogates in metadata values and keys with InvalidArgumentError, writing nothing', async () => {
      const workflowsBefore = await reader.count(WorkflowEntity);
      for (const { value } of LONE_SURROGATES) {
        for (const metadata of [{ value }, { [value]: 'key' }, { nested: { deep: [value] } }]) {
          await expect(service.start(StartMetadataWorkflow, { metadata })).rejects.toThrow(
            InvalidArgumentError,
          );
        }
      }
      expect(await reader.count(WorkflowEntity)).toBe(workflowsBefore);
    });
  });

  // ───────────────────────────── signal() ─────────────────────────────

  describe('signal()', () => {
    const payloadOf = (value: string) => ({
      [value]: value,
      list: [value],
      withNul: `${value}\u0000`,
    });

    it('stores hostile names, idempotency keys and payloads exactly, dedupes on them, and stays within its workflow', async () => {
      const victim = await service.start(SignalTargetWorkflow);
      const victimSignal = await service.signal(victim, 'victim', {
        idempotencyKey: 'victim-key',
        payload: { secret: 'victim' },
      });
      const target = await service.start(SignalTargetWorkflow);

      const sent: Array<{ signal: SignalEntity; payload: unknown }> = [];
      const send = async (
        name: string,
        key: string | undefined,
        payload: unknown,
        text: string,
      ) => {
        const rowsBefore = await reader.count(SignalEntity, { workflow_id: target.id });
        let signal: SignalEntity;
        try {
          signal = await service.signal(target, name, { idempotencyKey: key, payload });
        } catch (error) {
          expectEncodingErrorAllowed(
            { values: [], mayFailToEncode: setting.lossy && !isAscii(text) },
            error,
          );
          expect(await reader.count(SignalEntity, { workflow_id: target.id })).toBe(rowsBefore);
          return;
        }
        expect(fieldsOf(signal)).toStrictEqual({
          workflowId: target.id,
          name,
          idempotencyKey: key ?? null,
          payload,
          state: 'pending',
          duplicateDelivery: false,
        });
        sent.push({ signal, payload });
      };
      for (const { value } of HOSTILE_TEXT) await send(value, value, payloadOf(value), value);
      for (const { label, value } of MEGABYTE_VALUES)
        await send(label, undefined, { text: value }, value);

      // A known key returns the original row (first payload wins), wherever its hostile characters are.
      for (const { signal } of sent.filter(({ signal }) => signal.idempotencyKey !== null)) {
        const again = await service.signal(target, signal.name, {
          idempotencyKey: signal.idempotencyKey!,
          payload: 'second delivery',
        });
        expect(again.id).toBe(signal.id);
        expect(fieldsOf(again)).toStrictEqual({ ...fieldsOf(signal), duplicateDelivery: true });
      }
      // A key shaped to widen the lookup never finds the victim's signal.
      for (const key of [
        'victim-key',
        "' OR 1=1 -- ",
        "' OR '1'='1",
        "victim-key' OR 1=1 -- ",
        'victim-key\\',
      ]) {
        const signal = await service.signal(target, 'victim', { idempotencyKey: key });
        expect(fieldsOf(signal)).toStrictEqual({
          workflowId: target.id,
          name: 'victim',
          idempotencyKey: key,
          payload: null,
          state: 'pending',
          duplicateDelivery: false,
        });
        expect(signal.id).not.toBe(victimSignal.id);
        sent.push({ signal, payload: null });
      }

      // The gate's own hostile name wakes the parked step, which receives the signal as sent.
      const gatePayload = payloadOf(GATE_SIGNAL);
      const since = observer.mark();
      const gate = await service.signal(target, GATE_SIGNAL, {
        idempotencyKey: GATE_SIGNAL,
        payload: gatePayload,
      });
      expect(await observer.settled(target.id, ONGOING_OR_DONE, since)).toEqual({
        kind: 'settled',
        state: 'finished',
      });
      expect(probe.seenBy(target.id)).toStrictEqual([
        { id: gate.id, name: GATE_SIGNAL, idempotencyKey: GATE_SIGNAL, payload: gatePayload },
      ]);

      const stored = new Map((await service.signals(target)).map((signal) => [signal.id, signal]));
      expect(stored.size).toBe(sent.length + 1);
      expect(stored.get(gate.id)?.state).toBe('consumed');
      for (const { signal, payload } of sent) {
        expect(fieldsOf(stored.get(signal.id)!)).toStrictEqual({
          ...fieldsOf(signal),
          payload,
          state: 'pending',
        });
        const where: Record<string, unknown> = { workflow_id: target.id, name: signal.name };
        if (signal.idempotencyKey !== null) where.idempotency_key = signal.idempotencyKey;
        const rows = await reader.rows(
          SignalEntity,
          { text: ['id', 'name', 'idempotency_key'], json: ['payload'] },
          where,
        );
        expect(rows).toStrictEqual([
          { id: signal.id, name: signal.name, idempotency_key: signal.idempotencyKey, payload },
        ]);
      }

      // Finished: a known key is still a redelivery, a new one is refused.
      const known = sent.find(({ signal }) => signal.idempotencyKey !== null)!.signal;
      expect(
        (await service.signal(target, known.name, { idempotencyKey: known.idempotencyKey! }))
          .duplicateDelivery,
      ).toBe(true);
      await expect(
        service.signal(target, known.name, {
          idempotencyKey: `${known.idempotencyKey!.slice(0, 250)}'--`,
        }),
      ).rejects.toThrow(WorkflowNotOngoingError);

      // The victim kept exactly its one signal.
      expect(
        (await service.signals(victim)).map((s) => [s.id, s.idempotencyKey, s.payload]),
      ).toStrictEqual([[victimSignal.id, 'victim-key', { secret: 'victim' }]]);
      await service.cancel(victim);
    });

    it('refuses names, keys and payloads that cannot be stored with InvalidArgumentError, writing nothing', async () => {
      const target = await service.start(SignalTargetWorkflow);
      for (const { value } of UNSTORABLE_TEXT) {
        await expect(service.signal(target, value)).rejects.toThrow(InvalidArgumentError);
        await expect(service.signal(target, 'note', { idempotencyKey: value })).rejects.toThrow(
          InvalidArgumentError,
        );
      }
      for (const { value } of LONE_SURROGATES) {
        for (const payload of [value, { [value]: 1 }, { nested: [{ deep: value }] }]) {
          await expect(service.signal(target, 'note', { payload })).rejects.toThrow(
            InvalidArgumentError,
          );
        }
      }
      await expect(service.signal(target, 'note', { idempotencyKey: '' })).rejects.toThrow(
        InvalidArgumentError,
      );
      await expect(service.signal(target, ' \t\n')).rejects.toThrow(InvalidArgumentError);
      expect(await reader.count(SignalEntity, { workflow_id: target.id })).toBe(0);
      await service.cancel(target);
    });

    it('tells apart idempotency keys that differ only by trailing spaces or case', async () => {
      const target = await service.start(SignalTargetWorkflow);
      const keys = ['evt-1', 'evt-1 ', 'evt-1  ', 'EVT-1'];
      const signals: SignalEntity[] = [];
      for (const key of keys)
        signals.push(await service.signal(target, 'note', { idempotencyKey: key, payload: key }));
      expect(signals.map((s) => [s.idempotencyKey, s.payload, s.duplicateDelivery])).toStrictEqual(
        keys.map((key) => [key, key, false]),
      );
      expect(new Set(signals.map((s) => s.id)).size).toBe(keys.length);
      await service.cancel(target);
    });
  });

  // ───────────────────────────── Inside a step ─────────────────────────────

  describe('ctx.metadata.set()', () => {
    const userMetadataOf = (values: readonly HostileValue[]) => ({
      ...Object.fromEntries(values.map((value) => [keyOf(value), value.value])),
      'all values': values.map(({ value }) => value),
    });

    it.each(groupsOf(HOSTILE_JSON, setting))(
      'keeps hostile keys and values (%s)',
      async (_name, group) => {
        const since = observer.mark();
        const workflow = await service.start(StepMetadataWorkflow, {
          metadata: probe.plan({ values: group.values }),
        });
        const outcome = await observer.settled(workflow.id, ONGOING_OR_DONE, since);
        const [remember] = await service.executionHistory(workflow);
        if (cleanEncodingFailure(group, outcome, 'finished')) {
          // The finalize rolled back: nothing of the step's metadata was written.
          expect([remember.state, remember.metadata]).toStrictEqual(['in_progress', null]);
          return;
        }
        const user = userMetadataOf(group.values);
        expect(remember.metadata).toStrictEqual({ user });
        expect(
          await reader.rows(StepExecutionEntity, { json: ['metadata'] }, { id: remember.id }),
        ).toStrictEqual([{ metadata: { user } }]);
      },
    );

    it('refuses lone surrogates with InvalidArgumentError inside the step, storing none of them', async () => {
      const since = observer.mark();
      const workflow = await service.start(StepMetadataWorkflow, {
        metadata: probe.plan({ values: [], refusals: true }),
      });
      const outcome = await observer.settled(workflow.id, ONGOING_OR_DONE, since);
      const attempts = probe.attemptsBy(workflow.id);
      expect(attempts).toHaveLength(LONE_SURROGATES.length * 3);
      for (const attempt of attempts) {
        expect(attempt.stored ? 'stored' : attempt.error).toBeInstanceOf(InvalidArgumentError);
      }
      expect(outcome).toEqual({ kind: 'settled', state: 'finished' });
      const [remember] = await service.executionHistory(workflow);
      expect(remember.metadata).toBeNull();
    });
  });

  describe('resumable cursors', () => {
    it.each(groupsOf(HOSTILE_JSON, setting))(
      'keep hostile cursor values across executions (%s)',
      async (_name, group) => {
        const since = observer.mark();
        const workflow = await service.start(CursorWorkflow, {
          metadata: probe.plan({ values: group.values }),
        });
        const outcome = await observer.settled(workflow.id, ONGOING_OR_DONE, since);
        const walks = (await service.executionHistory(workflow)).filter(
          (e) => e.stepName === 'walk',
        );
        const cursors = group.values.map((value, at) => cursorOf(at, value));
        if (group.mayFailToEncode && outcome.kind === 'settled' && outcome.state === 'paused') {
          // The checkpoint could not be encoded: the step failed on it and no cursor was written.
          const failed = walks.at(-1)!;
          expect(failed.state).toBe('failed');
          expect(failed.errorMessage).toMatch(ENCODING_FAILURE);
          expect(walks.map((e) => e.cursor)).toStrictEqual(walks.map(() => null));
          return;
        }
        if (cleanEncodingFailure(group, outcome, 'finished')) return;

        // Execution n carries cursor n (the last one completes on the last cursor without setting one).
        expect(walks.map((e) => e.cursor)).toStrictEqual([...cursors, cursors.at(-1)]);
        expect(walks.map((e) => e.outcome)).toStrictEqual([
          ...cursors.map(() => 'continued'),
          'success',
        ]);
        expect(probe.seenBy(workflow.id)).toStrictEqual([null, ...cursors]);
        for (const [index, walk] of walks.entries()) {
          expect(
            await reader.rows(StepExecutionEntity, { json: ['cursor'] }, { id: walk.id }),
          ).toStrictEqual([{ cursor: cursors[Math.min(index, cursors.length - 1)] }]);
        }
      },
    );

    it('refuse lone surrogates with InvalidArgumentError, writing no cursor', async () => {
      const since = observer.mark();
      const workflow = await service.start(CursorWorkflow, {
        metadata: probe.plan({ values: [], refusals: true }),
      });
      expect(await observer.settled(workflow.id, ONGOING_OR_DONE, since)).toEqual({
        kind: 'settled',
        state: 'finished',
      });
      const attempts = probe.attemptsBy(workflow.id);
      expect(attempts).toHaveLength(LONE_SURROGATES.length * 2);
      for (const attempt of attempts) {
        expect(attempt.stored ? 'stored' : attempt.error).toBeInstanceOf(InvalidArgumentError);
      }
      const walks = (await service.executionHistory(workflow)).filter((e) => e.stepName === 'walk');
      expect(walks.map((e) => [e.state, e.cursor])).toStrictEqual([['completed', null]]);
    });
  });

  describe('errors thrown by a step', () => {
    // A step's error cannot be refused: NUL and lone surrogates are stored as U+FFFD in text
    // columns. Lone surrogates run apart, so that how they are kept judges nothing else.
    const errorGroups = [
      ...groupsOf(HOSTILE_JSON, setting, asStoredText),
      ...groupsOf(LONE_SURROGATES, setting, asStoredText).map(
        ([name, group]): [string, ValueGroup] => [`lone surrogates: ${name}`, group],
      ),
    ];

    it.each(errorGroups)(
      'keep a hostile message and class name in the error columns (%s)',
      async (_name, group) => {
        let since = observer.mark();
        const workflow = await service.start(StepErrorWorkflow, {
          metadata: probe.plan({ values: group.values }),
        });
        for (let round = 0; round < group.values.length; round++) {
          const outcome = await observer.settled(workflow.id, ONGOING_OR_DONE, since);
          if (cleanEncodingFailure(group, outcome, 'paused')) {
            const current = await service.currentExecution(workflow);
            expect([current?.state, current?.errorMessage ?? null]).toStrictEqual([
              'in_progress',
              null,
            ]);
            return;
          }
          since = observer.mark();
          await service.resume(workflow);
        }
        expect(await observer.settled(workflow.id, ONGOING_OR_DONE, since)).toEqual({
          kind: 'settled',
          state: 'finished',
        });

        const thrown = probe.seenBy(workflow.id) as Error[];
        const fails = (await service.executionHistory(workflow)).filter(
          (e) => e.stepName === 'fail',
        );
        expect(fails.map((e) => [e.state, e.outcome])).toStrictEqual([
          ...group.values.map(() => ['failed', 'failed']),
          ['completed', 'success'],
        ]);
        for (const [index, value] of group.values.entries()) {
          const execution = fails[index];
          const className = hostileError(value).constructor.name;
          expect(thrown[index].message).toBe(value.value);
          expect([execution.errorClassName, execution.errorMessage]).toStrictEqual([
            asStoredText(className),
            asStoredText(value.value),
          ]);
          const exception = execution.metadata?.exception as {
            class: string;
            message: string;
            backtrace: string[];
          };
          // JSON keeps NUL; a lone surrogate may come back as thrown or as U+FFFD.
          expect([className, withoutLoneSurrogates(className)]).toContain(exception.class);
          expect([value.value, withoutLoneSurrogates(value.value)]).toContain(exception.message);
          expect(execution.errorBacktrace).toBe(asStoredText(exception.backtrace.join('\n')));
          expect(
            await reader.rows(
              StepExecutionEntity,
              {
                text: ['error_class_name', 'error_message', 'error_backtrace'],
                json: ['metadata'],
              },
              { id: execution.id },
            ),
          ).toStrictEqual([
            {
              error_class_name: execution.errorClassName,
              error_message: execution.errorMessage,
              error_backtrace: execution.errorBacktrace,
              metadata: execution.metadata,
            },
          ]);
        }
      },
    );
  });

  // ───────────────────────────── Operator verbs ─────────────────────────────

  describe('operator verbs', () => {
    it('resumeAt() refuses hostile step names with a typed error, writing nothing; the exact quoted name works', async () => {
      let since = observer.mark();
      const workflow = await service.start(SteerableWorkflow);
      expect(await observer.settled(workflow.id, ONGOING_OR_DONE, since)).toEqual({
        kind: 'settled',
        state: 'paused',
      });
      const executionsBefore = await reader.count(StepExecutionEntity, {
        workflow_id: workflow.id,
      });
      const nearMisses = [
        `${QUOTED_STEP_NAME} `,
        ` ${QUOTED_STEP_NAME}`,
        QUOTED_STEP_NAME.toUpperCase(),
        QUOTED_STEP_NAME.slice(0, -1),
        `${QUOTED_STEP_NAME}\u0000`,
        QUOTED_STEP_NAME.replaceAll("'", "''"),
        QUOTED_STEP_NAME.replaceAll('\\', '\\\\'),
        'hold ',
        'HOLD',
        "hold' OR 1=1 -- ",
      ];
      for (const stepName of [
        ...HOSTILE_TEXT.map((v) => v.value),
        ...UNSTORABLE_TEXT.map((v) => v.value),
        ...nearMisses,
      ]) {
        const refusal = await service.resumeAt(workflow, stepName).then(
          () =>
            new Error(`resumeAt() accepted the step name ${JSON.stringify(stepName.slice(0, 80))}`),
          (error: unknown) => error,
        );
        expect(isTypedStepRefusal(refusal) ? 'typed refusal' : refusal).toBe('typed refusal');
      }
      expect(await reader.count(StepExecutionEntity, { workflow_id: workflow.id })).toBe(
        executionsBefore,
      );
      expect((await service.find(workflow.id))?.state).toBe('paused');

      since = observer.mark();
      const resumed = await service.resumeAt(workflow, QUOTED_STEP_NAME);
      expect(resumed.stepName).toBe(QUOTED_STEP_NAME);
      expect(await observer.settled(workflow.id, ONGOING_OR_DONE, since)).toEqual({
        kind: 'settled',
        state: 'finished',
      });
      expect(probe.seenBy(workflow.id)).toStrictEqual([QUOTED_STEP_NAME]);
      expect((await service.executionHistory(workflow)).map((e) => e.stepName)).toStrictEqual([
        'hold',
        QUOTED_STEP_NAME,
        'last',
      ]);
      expect(
        await reader.rows(StepExecutionEntity, { text: ['step_name'] }, { id: resumed.id }),
      ).toStrictEqual([{ step_name: QUOTED_STEP_NAME }]);
    });

    it('every verb refuses a hostile workflow id with WorkflowNotFoundError (find() resolves null)', async () => {
      const workflowsBefore = await reader.count(WorkflowEntity);
      const ids = [...HOSTILE_TEXT, ...UNSTORABLE_TEXT].map(({ value }) => value);
      for (const id of ids) {
        expect(await service.find(id)).toBeNull();
        const verbs: Array<() => Promise<unknown>> = [
          () => service.skip(id),
          () => service.resumeAt(id, 'hold'),
          () => service.resume(id),
          () => service.pause(id),
          () => service.cancel(id),
          () => service.signal(id, 'note', { idempotencyKey: 'key', payload: 'x' }),
          () => service.executionHistory(id),
          () => service.signals(id),
          () => service.currentExecution(id),
          () => service.setStepJobOptions(id, null),
        ];
        for (const verb of verbs) {
          const refusal = await verb().then(
            () => new Error(`a verb accepted the workflow id ${JSON.stringify(id.slice(0, 80))}`),
            (error: unknown) => error,
          );
          expect(refusal).toBeInstanceOf(WorkflowNotFoundError);
        }
      }
      expect(await reader.count(WorkflowEntity)).toBe(workflowsBefore);
    });
  });
});
