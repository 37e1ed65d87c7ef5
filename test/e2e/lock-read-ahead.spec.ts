import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import {
  AfterLoad,
  Column,
  CreateDateColumn,
  DeleteDateColumn,
  Entity,
  ManyToOne,
  PrimaryGeneratedColumn,
  UpdateDateColumn,
  VersionColumn,
  DataSource,
  type EntitySubscriberInterface,
  type ValueTransformer,
} from 'typeorm';
import { Step, Workflow, type StepContext } from '../../lib';
import { HeroResolver } from '../../lib/adapters/typeorm/hero-resolver';
import { recordMessages } from './support/sql-messages';
import { describeIf } from './support/describe-if';
import { EngineHarness } from './support/engine-harness';
import { testDatabase } from './support/database';
import { testTransport } from './support/transport';

enum Tier {
  Bronze = 'bronze',
  Gold = 'gold',
}

/** Stored lower case, read back upper case: a transformer `getOne()` applies on the way out. */
const upperCase: ValueTransformer = {
  to: (value: string | null | undefined) => value?.toLowerCase() ?? value,
  from: (value: string | null) => (value === null ? null : value.toUpperCase()),
};

/** A hero with every kind of column TypeORM hydrates on PostgreSQL. */
@Entity('read_ahead_heroes')
class RichHero {
  @PrimaryGeneratedColumn('uuid') id!: string;
  @Column({ type: 'varchar' }) name!: string;
  @Column({ type: 'int', nullable: true }) count!: number | null;
  @Column({ type: 'bigint', nullable: true }) big!: string | null;
  @Column({ type: 'numeric', precision: 12, scale: 3, nullable: true }) amount!: string | null;
  @Column({ type: 'double precision', nullable: true }) ratio!: number | null;
  @Column({ type: 'boolean', default: false }) flag!: boolean;
  @Column({ type: 'timestamptz', nullable: true }) at!: Date | null;
  @Column({ type: 'timestamp', nullable: true }) localAt!: Date | null;
  @Column({ type: 'date', nullable: true }) day!: string | null;
  @Column({ type: 'time', nullable: true }) clock!: string | null;
  @Column({ type: 'jsonb', nullable: true }) doc!: unknown;
  @Column({ type: 'json', nullable: true }) plainDoc!: unknown;
  @Column({ type: 'simple-json', nullable: true }) simpleDoc!: unknown;
  @Column({ type: 'simple-array', nullable: true }) tags!: string[] | null;
  @Column({ type: 'int', array: true, nullable: true }) scores!: number[] | null;
  @Column({ type: 'enum', enum: Tier, default: Tier.Bronze }) tier!: Tier;
  @Column({ type: 'bytea', nullable: true }) blob!: Buffer | null;
  @Column({ type: 'varchar', nullable: true, transformer: upperCase }) code!: string | null;
  @Column({ type: 'varchar', nullable: true, select: false }) secret!: string | null;
  @Column({
    type: 'varchar',
    nullable: true,
    name: 'a_column_whose_database_name_is_longer_than_what_postgres_allows_an_alias',
  })
  longNamed!: string | null;
  @CreateDateColumn() createdAt!: Date;
  @UpdateDateColumn() updatedAt!: Date;
  @VersionColumn() version!: number;
  @DeleteDateColumn() deletedAt!: Date | null;
  /** Set by the constructor, which `getOne()` runs or not as `entitySkipConstructor` says. */
  built = 'by the constructor';
}

/** Has a relation: only `getOne()` loads it. */
@Entity('read_ahead_related_heroes')
class RelatedHero {
  @PrimaryGeneratedColumn() id!: number;
  @ManyToOne(() => RichHero, { nullable: true }) owner!: RichHero | null;
}

/** Has an `@AfterLoad` listener: only `getOne()` runs it. */
@Entity('read_ahead_listening_heroes')
class ListeningHero {
  @PrimaryGeneratedColumn() id!: number;
  @Column({ type: 'varchar' }) name!: string;
  loadedBy?: string;
  @AfterLoad() markLoaded() {
    this.loadedBy = 'afterLoad';
  }
}

/** What each step saw as its hero; the data source the steps write through. */
@Injectable()
class HeroSightings {
  readonly seen = new Map<string, object>();
  constructor(@InjectDataSource() readonly dataSource: DataSource) {}
}

/** `touch` changes the hero, `look` (chained in the same job) must see the change. */
@Workflow({ hero: () => RichHero })
class ReadAheadWorkflow {
  constructor(private readonly sightings: HeroSightings) {}

  @Step() async touch(ctx: StepContext<RichHero>) {
    this.sightings.seen.set('touch', ctx.hero);
    await this.sightings.dataSource
      .getRepository(RichHero)
      .update(ctx.hero.id, { name: 'after', count: 2 });
  }

  @Step() look(ctx: StepContext<RichHero>) {
    this.sightings.seen.set('look', ctx.hero);
  }
}

/** Parks for 'go'; the woken step records the signal it received. */
@Workflow({ hero: () => RichHero })
class WaitingWorkflow {
  constructor(private readonly sightings: HeroSightings) {}

  @Step() ready() {}

  @Step({ waitFor: 'go' }) woken(ctx: StepContext<RichHero>) {
    this.sightings.seen.set('woken', { hero: ctx.hero, signal: ctx.receivedSignal });
  }
}

@Workflow({ hero: () => ListeningHero })
class ListeningWorkflow {
  constructor(private readonly sightings: HeroSightings) {}

  @Step() first(ctx: StepContext<ListeningHero>) {
    this.sightings.seen.set('first', ctx.hero);
  }

  @Step() second(ctx: StepContext<ListeningHero>) {
    this.sightings.seen.set('second', ctx.hero);
  }
}

/** A step transaction's first statements: its BEGIN, then the workflow's and the execution's locks. */
const OPENING_AND_LOCKS = [
  'BEGIN',
  expect.stringMatching(/"geneva_drive_workflows" .*FOR UPDATE$/),
  expect.stringMatching(/"geneva_drive_step_executions" .*FOR UPDATE$/),
];

/**
 * A guessing transaction's first statements: its BEGIN, the fence that locks the workflow and then
 * the execution (each inside the check of its row), then the hero's read with the fence's
 * confirmation, once the locks are held.
 */
const FENCE_AND_HERO = [
  'BEGIN',
  expect.stringMatching(
    /^SELECT set_config\(\$\d+, CASE WHEN EXISTS \(SELECT 1 FROM \S*"geneva_drive_workflows" .* FOR UPDATE\) AND EXISTS \(SELECT 1 FROM \S*"geneva_drive_step_executions" .* FOR UPDATE\) THEN /,
  ),
  expect.stringMatching(
    /^SELECT "read"\.\*, set_config\(\$\d+, CASE WHEN current_setting\(\$\d+, true\) = \$\d+ .*FROM \(SELECT .*"read_ahead_heroes" .*\) AS "read"$/,
  ),
];

const readsTable = (table: string) => (statement: string) =>
  /^\s*SELECT\b/i.test(statement) && statement.includes(`"${table}"`);

/**
 * A step's hero (and a woken step's pinned signal) is read in the round trip of its row locks
 * (PostgreSQL), the hero with a statement
 * the library sends itself and an entity it builds through TypeORM's public metadata API: for the
 * entities where that is all `getOne()` does, and exactly what `getOne()` builds.
 */
describeIf(testDatabase === 'postgres' && testTransport !== 'local')(
  'the hero and the pinned signal read beside the row locks (PostgreSQL)',
  () => {
    let harness: EngineHarness;
    let resolver: HeroResolver;
    let sightings: HeroSightings;
    let messages: string[][];

    beforeAll(async () => {
      harness = await EngineHarness.boot({
        workflows: [ReadAheadWorkflow, ListeningWorkflow, WaitingWorkflow],
        providers: [HeroSightings],
        entities: [RichHero, RelatedHero, ListeningHero],
      });
      resolver = harness.get(HeroResolver);
      sightings = harness.get(HeroSightings);
      messages = recordMessages(harness.dataSource);
    });
    afterAll(() => harness?.close());

    const heroes = () => harness.dataSource.getRepository(RichHero);
    const getOne = (id: string) =>
      harness.dataSource
        .createQueryBuilder(RichHero, 'hero')
        .where('hero.id = :heroId', { heroId: id })
        .getOne();

    async function readAhead(id: string): Promise<object | null> {
      const reader = resolver.readerFor('RichHero');
      if (!reader) throw new Error('RichHero has no reader');
      const { text, values } = reader.statement(id);
      return reader.hydrate(await harness.dataSource.query(text, [...values]));
    }

    it('builds the entity getOne() builds: same class, same properties in the same order, same values', async () => {
      const full = await heroes().save(
        heroes().create({
          name: "O'Brien \\ ; $1",
          count: 7,
          big: '9007199254740993',
          amount: '12.500',
          ratio: 0.1,
          flag: true,
          at: new Date('2026-12-04T01:02:03.456Z'),
          localAt: new Date('2026-12-04T01:02:03.000Z'),
          day: '2026-12-04',
          clock: '13:14:15',
          doc: { nested: [1, 'two', null], deep: { ok: true } },
          plainDoc: ['a', { b: 2 }],
          simpleDoc: { simple: 'json' },
          tags: ['red', 'green'],
          scores: [3, 1, 2],
          tier: Tier.Gold,
          blob: Buffer.from([0, 1, 254, 255]),
          code: 'MiXeD',
          secret: 'not selected',
          longNamed: 'read through a shortened alias by getOne()',
        }),
      );
      const sparse = await heroes().save(heroes().create({ name: 'nulls everywhere' }));

      for (const { id } of [full, sparse]) {
        const expected = await getOne(id);
        const actual = await readAhead(id);
        expect(expected).toBeInstanceOf(RichHero);
        expect(actual).toStrictEqual(expected);
        expect(Object.keys(actual!)).toEqual(Object.keys(expected!));
        expect(Object.getPrototypeOf(actual)).toBe(RichHero.prototype);
      }
      expect(await readAhead(full.id)).not.toHaveProperty('secret');
    });

    it('resolves null where getOne() does: no such row, or a soft-deleted one', async () => {
      const gone = await heroes().save(heroes().create({ name: 'soft-deleted' }));
      await heroes().softDelete(gone.id);
      const nowhere = '00000000-0000-4000-8000-000000000000';
      expect(await getOne(gone.id)).toBeNull();
      expect(await readAhead(gone.id)).toBeNull();
      expect(await getOne(nowhere)).toBeNull();
      expect(await readAhead(nowhere)).toBeNull();
    });

    it('gives no reader for an entity getOne() does more for: a relation, an @AfterLoad listener, an afterLoad subscriber', () => {
      expect(resolver.readerFor('RichHero')).not.toBeNull();
      expect(resolver.readerFor('RelatedHero')).toBeNull();
      expect(resolver.readerFor('ListeningHero')).toBeNull();

      const subscriber: EntitySubscriberInterface = { afterLoad: () => undefined };
      harness.dataSource.subscribers.push(subscriber);
      try {
        expect(resolver.readerFor('RichHero')).toBeNull();
      } finally {
        harness.dataSource.subscribers.splice(
          harness.dataSource.subscribers.indexOf(subscriber),
          1,
        );
      }
      expect(resolver.readerFor('RichHero')).not.toBeNull();
    });

    it("a job's step and a chained step read the hero in their lock round trip, and see the previous step's change", async () => {
      const hero = await heroes().save(heroes().create({ name: 'before', count: 1 }));
      const mark = messages.length;
      const workflow = await harness.service.start(ReadAheadWorkflow, { hero });
      await harness.waitForState(workflow.id, 'finished');
      const sent = messages.slice(mark);

      const seen = sightings.seen.get('look');
      expect(seen).toBeInstanceOf(RichHero);
      expect(seen).toMatchObject({ name: 'after', count: 2 });
      expect(seen).toStrictEqual(await getOne(hero.id));

      // The hero is read twice, each time after the row locks in their message: by the job's
      // prepare of `touch` (the job names the hero), then by the finalize of `touch`, which
      // prepares `look` in process (its fence takes the locks). The finalize of `look`, the last
      // step, reads no hero.
      const heroRead = expect.stringMatching(/^SELECT .*"read_ahead_heroes"/);
      const heroReads = sent.filter((statements) =>
        statements.some(readsTable('read_ahead_heroes')),
      );
      expect(heroReads).toHaveLength(2);
      const [prepareOfTouch, finalizeOfTouch] = heroReads;
      expect(prepareOfTouch).toEqual([...OPENING_AND_LOCKS, heroRead]);
      // The finalize expects the rows as the prepare left them: the fence (the locks, then the
      // hero's read, which must find the row) and the fenced writes travel in the same message,
      // with the COMMIT.
      expect(finalizeOfTouch.slice(0, 3)).toEqual(FENCE_AND_HERO);
      expect(finalizeOfTouch.at(-1)).toBe('COMMIT');
    });

    it("a job naming another hero gets the workflow's own: the job's hero is only a hint", async () => {
      const idle = await EngineHarness.boot({
        workflows: [ReadAheadWorkflow, ListeningWorkflow],
        providers: [HeroSightings],
        entities: [RichHero, RelatedHero, ListeningHero],
        options: { worker: false },
      });
      try {
        const repository = idle.dataSource.getRepository(RichHero);
        const own = await repository.save(repository.create({ name: 'own' }));
        const decoy = await repository.save(repository.create({ name: 'decoy' }));
        const workflow = await idle.service.start(ReadAheadWorkflow, { hero: own });
        const execution = await idle.service.currentExecution(workflow.id);
        await idle.runner.performJob(
          {
            stepExecutionId: execution!.id,
            workflowId: workflow.id,
            heroType: 'RichHero',
            heroId: decoy.id,
          },
          { queue: 'geneva-drive', priority: undefined },
        );
        const seen = idle.get(HeroSightings).seen;
        expect(seen.get('touch')).toMatchObject({ id: own.id, name: 'own' });
        expect(seen.get('look')).toMatchObject({ id: own.id, name: 'after' });
      } finally {
        await idle.close();
      }
    });

    it('a step woken by this process prepares in one round trip (its hero read with its locks), and settles the signal in three', async () => {
      const hero = await heroes().save(heroes().create({ name: 'waiting' }));
      const workflow = await harness.service.start(WaitingWorkflow, { hero });
      await harness.waitForWorkflow(
        workflow.id,
        async () => (await harness.service.currentExecution(workflow.id))?.state === 'waiting',
      );
      const mark = messages.length;
      const signal = await harness.service.signal(workflow.id, 'go', { payload: { n: 1 } });
      await harness.waitForState(workflow.id, 'finished');

      const woken = sightings.seen.get('woken') as { hero: object; signal: object };
      expect(woken.hero).toStrictEqual(await getOne(hero.id));
      expect(woken.signal).toMatchObject({ id: signal.id, name: 'go', payload: { n: 1 } });
      // The woken step's prepare starts from the rows the delivery left (see WakeSnapshots): the
      // fence taking its locks, the hero's read (with the pinned signal's check), its writes and
      // the COMMIT, one message.
      const prepare = messages
        .slice(mark)
        .find((statements) => statements.some(readsTable('read_ahead_heroes')));
      expect(prepare?.[2]).toMatch(/ AND EXISTS \(SELECT 1 FROM \S*"geneva_drive_signals" WHERE /);
      expect(prepare).toEqual([
        ...FENCE_AND_HERO,
        expect.stringMatching(/^UPDATE .*"geneva_drive_step_executions"/),
        expect.stringMatching(/^UPDATE .*"geneva_drive_workflows"/),
        'COMMIT',
      ]);
      // The finalize settles the signal in three round trips: the locks read the signal too;
      // the execution's completion travels with the read of the signal's attached executions;
      // the signal's counters and the workflow with the COMMIT.
      const finalize = messages.slice(messages.indexOf(prepare!) + 1).slice(0, 3);
      expect(finalize).toEqual([
        [...OPENING_AND_LOCKS, expect.stringMatching(/^SELECT .*"geneva_drive_signals"/)],
        [
          expect.stringMatching(/^UPDATE .*"geneva_drive_step_executions"/),
          expect.stringMatching(/^SELECT .*"geneva_drive_step_executions" WHERE "signal_id" = \$1/),
        ],
        [
          expect.stringMatching(/^UPDATE .*"geneva_drive_signals"/),
          expect.stringMatching(/^UPDATE .*"geneva_drive_workflows"/),
          'COMMIT',
        ],
      ]);
      expect(await harness.service.signals(workflow.id)).toEqual([
        expect.objectContaining({ id: signal.id, state: 'consumed', claimed: 1, consumed: 1 }),
      ]);
    });

    it('an entity with an @AfterLoad listener is loaded by getOne() on a chained step too: its listener runs', async () => {
      const hero = await harness.dataSource
        .getRepository(ListeningHero)
        .save({ name: 'listened to' });
      const workflow = await harness.service.start(ListeningWorkflow, { hero });
      await harness.waitForState(workflow.id, 'finished');
      expect(sightings.seen.get('first')).toMatchObject({ loadedBy: 'afterLoad' });
      expect(sightings.seen.get('second')).toMatchObject({ loadedBy: 'afterLoad' });
    });
  },
);
