import {
  AWKWARD_STRINGS,
  RoundTripRecorder,
  RoundTripWorkflow,
} from '../fixtures/round-trip.workflows';
import { testDatabaseLabel } from './support/database';
import { EngineHarness } from './support/engine-harness';

/**
 * Values the runner writes on its hot path (step metadata, resumable cursors, error columns) come
 * back exactly as written, whatever they contain: on PostgreSQL these writes travel as escaped
 * literals in one batched round trip (PostgresWriteBatch), elsewhere as bound parameters.
 */
describe(`values written by the runner round-trip exactly (${testDatabaseLabel} + BullMQ)`, () => {
  let harness: EngineHarness;

  beforeAll(async () => {
    harness = await EngineHarness.boot({
      workflows: [RoundTripWorkflow],
      providers: [RoundTripRecorder],
    });
  });
  afterAll(() => harness?.close());

  it('keeps metadata, cursors and error text with quotes, backslashes, unicode and NUL', async () => {
    const workflow = await harness.service.start(RoundTripWorkflow);
    await harness.waitForState(workflow.id, 'paused', 20_000);
    const history = await harness.history(workflow.id);

    expect(history[0].metadata).toEqual({
      user: {
        strings: AWKWARD_STRINGS,
        nested: {
          quote: "'",
          numbers: [1, 2.5, -3],
          flag: true,
          nothing: null,
          when: '2026-01-01T00:00:00.000Z',
        },
      },
    });

    const walks = history.filter((execution) => execution.stepName === 'walk');
    expect(walks.map((execution) => execution.cursor)).toEqual([
      ...AWKWARD_STRINGS,
      AWKWARD_STRINGS.at(-1),
    ]);
    expect(harness.get(RoundTripRecorder).cursorsSeen).toEqual([null, ...AWKWARD_STRINGS]);

    const failed = history.at(-1)!;
    expect([failed.stepName, failed.state, failed.errorClassName]).toEqual([
      'fail',
      'failed',
      'AwkwardError',
    ]);
    // NUL cannot live in a text column on PostgreSQL: the library stores U+FFFD in its place.
    expect(failed.errorMessage).toBe(AWKWARD_STRINGS.join(' | ').replaceAll('\u0000', '\uFFFD'));
  });
});
