import type { DataSource, Logger, ObjectLiteral } from 'typeorm';
import { GenevaDriveDataSource } from '../../lib/persistence/geneva-drive-data-source';
import type { UnitOfWork } from '../../lib/persistence/unit-of-work';
import { WorkflowStore } from '../../lib/persistence/workflow.store';
import { HeroResolver } from '../../lib/runner/hero-resolver';
import { ThreeStepWorkflow } from '../fixtures/basic.workflows';
import { Order } from '../fixtures/order.entity';
import {
  ArchivableOrder,
  CodedCustomer,
  OrderLine,
  Shipment,
} from '../fixtures/read-ahead.entities';
import { StepJournal } from '../fixtures/step-journal';
import { describeOn } from './support/describe-if';
import { EngineHarness } from './support/engine-harness';

/**
 * The SQL messages the DataSource sends, as its logger sees them (TypeORM logs each query before
 * sending it, PostgresQueryBatch its messages; bench/support/sql-counter.ts wraps it likewise).
 */
function recordMessages(dataSource: DataSource): string[] {
  const messages: string[] = [];
  const logger = dataSource.logger;
  const recording: Logger = Object.assign(Object.create(logger) as Logger, {
    logQuery: (...args: Parameters<Logger['logQuery']>) => {
      messages.push(args[0]);
      logger.logQuery(...args);
    },
  });
  // `logger` is read-only in TypeORM's typings but a plain property at run time.
  Object.assign(dataSource, { logger: recording });
  return messages;
}

/**
 * On PostgreSQL's batched hot path the chained step's hero is read with the row locks
 * (`HeroResolver.readAhead`) and hydrated by the library instead of TypeORM's `getOne()`. A step
 * sees its hero through that object, so it must be the very entity `getOne()` would give:
 * converted column values, transformers applied, after-load listeners run once, soft-deleted rows
 * left out; and where the library cannot match `getOne()` (relation ids, embeddeds) it must step
 * aside. The hero read ahead replaces the next load, and only that one.
 */
describeOn('postgres')('hero read-ahead on the batched hot path (PostgreSQL)', () => {
  let harness: EngineHarness;
  let database: GenevaDriveDataSource;
  let heroes: HeroResolver;
  let store: WorkflowStore;
  let messages: string[];

  beforeAll(async () => {
    harness = await EngineHarness.boot({
      workflows: [ThreeStepWorkflow],
      providers: [StepJournal],
      entities: [Order, ArchivableOrder, OrderLine, Shipment, CodedCustomer],
      options: { worker: false },
    });
    database = harness.get(GenevaDriveDataSource);
    heroes = harness.get(HeroResolver);
    store = harness.get(WorkflowStore);
    messages = recordMessages(harness.dataSource);
  });

  afterAll(() => harness?.close());

  beforeEach(() => ArchivableOrder.loads.splice(0));

  const hotPath = <T>(work: (uow: UnitOfWork) => Promise<T>): Promise<T> =>
    database.transaction(work, undefined, { hotPath: true });

  /** Sends the hero's read-ahead statement and keeps its result for the next load. */
  async function readAheadAndKeep(
    uow: UnitOfWork,
    heroType: string,
    heroId: string,
  ): Promise<void> {
    const read = heroes.readAhead(uow, heroType, heroId);
    if (!read) throw new Error(`readAhead declined ${heroType}`);
    const [result] = await uow.batch!.readTogether([read.statement]);
    await read.keep(result);
  }

  /** The hero as TypeORM's getOne() loads it, outside any batch. */
  function getOne<E extends ObjectLiteral>(
    target: new () => E,
    id: number,
    withDeleted = false,
  ): Promise<E | null> {
    const query = harness.dataSource
      .getRepository(target)
      .createQueryBuilder('hero')
      .where('hero.id = :id', { id });
    if (withDeleted) query.withDeleted();
    return query.getOne();
  }

  function saveArchivableOrder(): Promise<ArchivableOrder> {
    return harness.dataSource.getRepository(ArchivableOrder).save({
      status: 'paid',
      total: '12.50',
      details: { note: "it's \\ fine", lines: [1, 2], gift: false },
      tags: ['rush', 'fragile'],
      code: 'AbC',
    });
  }

  it('readAhead and keep give the Order fixture exactly as getOne() loads it', async () => {
    const order = await harness.dataSource.getRepository(Order).save({ status: 'shipped' });

    const hero = await hotPath(async (uow) => {
      await readAheadAndKeep(uow, 'Order', String(order.id));
      return heroes.load(uow, 'Order', String(order.id));
    });

    expect(hero).toBeInstanceOf(Order);
    expect(hero).toStrictEqual(await getOne(Order, order.id));
    expect(hero).toEqual({ id: order.id, status: 'shipped' });
  });

  it('hydrates numeric, JSON, simple-array, transformed and timestamp columns as getOne() does', async () => {
    const saved = await saveArchivableOrder();

    const hero = await hotPath(async (uow) => {
      await readAheadAndKeep(uow, 'ArchivableOrder', String(saved.id));
      return heroes.load(uow, 'ArchivableOrder', String(saved.id));
    });

    expect(hero).toBeInstanceOf(ArchivableOrder);
    expect(hero).toStrictEqual(await getOne(ArchivableOrder, saved.id));
    expect(hero).toMatchObject({
      total: '12.50',
      details: { note: "it's \\ fine", lines: [1, 2], gift: false },
      tags: ['rush', 'fragile'],
      code: 'ABC',
      deletedAt: null,
    });
    expect((hero as ArchivableOrder).createdAt).toBeInstanceOf(Date);
  });

  it('runs the @AfterLoad listener once for a hero read ahead', async () => {
    const saved = await saveArchivableOrder();

    await hotPath(async (uow) => {
      await readAheadAndKeep(uow, 'ArchivableOrder', String(saved.id));
      await heroes.load(uow, 'ArchivableOrder', String(saved.id));
    });

    expect(ArchivableOrder.loads).toEqual([saved.id]);
  });

  it('comes back null for a soft-deleted hero, as getOne() does', async () => {
    const saved = await saveArchivableOrder();
    await harness.dataSource.getRepository(ArchivableOrder).softDelete(saved.id);

    const hero = await hotPath(async (uow) => {
      await readAheadAndKeep(uow, 'ArchivableOrder', String(saved.id));
      return heroes.load(uow, 'ArchivableOrder', String(saved.id));
    });

    expect(hero).toBeNull();
    expect(await getOne(ArchivableOrder, saved.id)).toBeNull();
    // The row is there, only deleted.
    expect(await getOne(ArchivableOrder, saved.id, true)).toMatchObject({
      id: saved.id,
      deletedAt: expect.any(Date),
    });
    expect(ArchivableOrder.loads).toEqual([saved.id]);
  });

  it('comes back null for a hero whose row is gone', async () => {
    const hero = await hotPath(async (uow) => {
      await readAheadAndKeep(uow, 'Order', '987654321');
      return heroes.load(uow, 'Order', '987654321');
    });
    expect(hero).toBeNull();
  });

  it('replaces the next load only: that load sends nothing, a second load reads again', async () => {
    const saved = await saveArchivableOrder();
    const id = String(saved.id);

    await hotPath(async (uow) => {
      await readAheadAndKeep(uow, 'ArchivableOrder', id);

      const beforeFirst = messages.length;
      const first = await heroes.load(uow, 'ArchivableOrder', id);
      expect(messages.slice(beforeFirst)).toEqual([]);

      const beforeSecond = messages.length;
      const second = await heroes.load(uow, 'ArchivableOrder', id);
      expect(messages.slice(beforeSecond)).toHaveLength(1);
      expect(second).not.toBe(first);
      expect(second).toStrictEqual(first);
    });

    // Hydrated twice: once read ahead, once read again by the second load.
    expect(ArchivableOrder.loads).toEqual([saved.id, saved.id]);
  });

  it('travels with the row locks: the hero costs no round trip of its own', async () => {
    const order = await harness.dataSource.getRepository(Order).save({ status: 'new' });
    const workflow = await database.transaction((uow) =>
      store.insertWorkflow(uow, {
        type: 'ThreeStepWorkflow',
        heroType: 'Order',
        heroId: String(order.id),
        allowMultiple: false,
        metadata: null,
      }),
    );
    const execution = await database.transaction((uow) =>
      store.insertExecution(uow, {
        workflowId: workflow.id,
        stepName: 'first',
        scheduledFor: new Date(),
      }),
    );

    const mark = messages.length;
    const hero = await hotPath(async (uow) => {
      const read = heroes.readAhead(uow, 'Order', String(order.id))!;
      const locked = await store.lockRows(uow, workflow.id, execution.id, [read.statement]);
      await read.keep(locked.alongside[0]);
      expect(locked.workflow?.id).toBe(workflow.id);
      return heroes.load(uow, 'Order', String(order.id));
    });
    const sent = messages.slice(mark);

    expect(hero).toStrictEqual(await getOne(Order, order.id));
    // The opening, both locks and the hero in one message; then the COMMIT.
    expect(sent).toHaveLength(2);
    expect(sent[0]).toMatch(/^START TRANSACTION;/);
    expect(sent[0].match(/^EXECUTE /gm)).toHaveLength(3);
    expect(sent[1]).toBe('COMMIT');
  });

  it('steps aside (null) for a hero whose primary key has a transformer: found as TypeORM finds it', async () => {
    const customer = await harness.dataSource
      .getRepository(CodedCustomer)
      .save({ code: 'abc', name: 'Ada' });
    const stored = String(customer.code);

    const loaded = await hotPath(async (uow) => {
      expect(heroes.readAhead(uow, 'CodedCustomer', stored)).toBeNull();
      return heroes.load(uow, 'CodedCustomer', stored);
    });

    const viaTypeorm = await harness.dataSource
      .createQueryBuilder(CodedCustomer, 'hero')
      .where('hero.code = :heroId', { heroId: stored })
      .getOne();
    expect(loaded).toStrictEqual(viaTypeorm);
  });

  it('steps aside (null) for a hero with @RelationId or an embedded column, which TypeORM then loads', async () => {
    const order = await harness.dataSource.getRepository(Order).save({ status: 'new' });
    const line = await harness.dataSource.getRepository(OrderLine).save({ sku: 'SKU-1', order });
    const shipment = await harness.dataSource.getRepository(Shipment).save({
      address: { city: 'Geneva', country: 'CH' },
    });

    const loaded = await hotPath(async (uow) => {
      expect(heroes.readAhead(uow, 'OrderLine', String(line.id))).toBeNull();
      expect(heroes.readAhead(uow, 'Shipment', String(shipment.id))).toBeNull();
      // Control: the plain entities of this app are read ahead.
      expect(heroes.readAhead(uow, 'Order', String(order.id))).not.toBeNull();
      return {
        line: await heroes.load(uow, 'OrderLine', String(line.id)),
        shipment: await heroes.load(uow, 'Shipment', String(shipment.id)),
      };
    });

    expect(loaded.line).toStrictEqual(await getOne(OrderLine, line.id));
    expect(loaded.line).toMatchObject({ id: line.id, sku: 'SKU-1', orderId: order.id });
    expect(loaded.shipment).toStrictEqual(await getOne(Shipment, shipment.id));
    expect(loaded.shipment).toMatchObject({ address: { city: 'Geneva', country: 'CH' } });
  });

  it('steps aside for an id the key column would refuse: the read must not fail the transaction it travels in', async () => {
    const loaded = await hotPath(async (uow) => {
      // Order's key is an integer column (int4).
      expect(heroes.readAhead(uow, 'Order', '2147483647')).not.toBeNull();
      expect(heroes.readAhead(uow, 'Order', '-2147483648')).not.toBeNull();
      expect(heroes.readAhead(uow, 'Order', '2147483648')).toBeNull();
      expect(heroes.readAhead(uow, 'Order', '12abc')).toBeNull();
      return heroes.load(uow, 'Order', '2147483647');
    });
    expect(loaded).toBeNull();
    // TypeORM's load reports what PostgreSQL makes of the out-of-range id, as it always did.
    await expect(hotPath((uow) => heroes.load(uow, 'Order', '2147483648'))).rejects.toThrow(
      /out of range/,
    );
  });

  it('steps aside outside a batched transaction and for an unknown hero type', async () => {
    const order = await harness.dataSource.getRepository(Order).save({ status: 'new' });
    await database.transaction((uow) => {
      expect(uow.batch).toBeNull();
      expect(heroes.readAhead(uow, 'Order', String(order.id))).toBeNull();
      return Promise.resolve();
    });
    await hotPath((uow) => {
      expect(heroes.readAhead(uow, 'NoSuchEntity', '1')).toBeNull();
      return Promise.resolve();
    });
  });
});
