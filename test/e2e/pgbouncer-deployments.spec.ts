import { ThreeStepWorkflow } from '../fixtures/basic.workflows';
import { Order } from '../fixtures/order.entity';
import { StepJournal } from '../fixtures/step-journal';
import { testPooler } from './support/database';
import { describeIf } from './support/describe-if';
import { EngineHarness } from './support/engine-harness';

const WORKFLOWS_PER_DEPLOYMENT = 40;
const STEPS = ['first', 'second', 'third'];
/** Deployment B's heroes get ids from here on, so a hero read in the wrong schema shows. */
const SECOND_DEPLOYMENT_IDS_FROM = 100_001;

interface Deployment {
  name: string;
  harness: EngineHarness;
  journal: StepJournal;
  errors: string[];
}

/**
 * Two deployments of the real module, each on a schema of its own in one database, behind one
 * PgBouncer pool in transaction mode with default options: their transactions take turns on the
 * same few server connections, so whatever one leaves on a connection (a named prepared statement,
 * a session setting) is met by the other. The library must leave nothing there (SPEC §16.1), and
 * no statement of one deployment may run against the other's schema.
 *
 * Only in the PgBouncer run (.ci/run's test-pgbouncer stage: GENEVA_TEST_POOLER=pgbouncer,
 * PGPORT=6433, test/pgbouncer/start.sh); on a direct connection every connection is a deployment's
 * own, and the other specs cover that.
 */
describeIf(testPooler === 'pgbouncer')(
  'two deployments on two schemas behind one PgBouncer pool (transaction mode, default options)',
  () => {
    let deployments: Deployment[] = [];

    async function deploy(name: string): Promise<Deployment> {
      const errors: string[] = [];
      const harness = await EngineHarness.boot({
        workflows: [ThreeStepWorkflow],
        providers: [StepJournal],
        entities: [Order],
        options: {
          errorReporter: (error) => {
            const code = (error as { code?: unknown }).code;
            errors.push(`${typeof code === 'string' ? `${code} ` : ''}${error.message}`);
          },
        },
      });
      return { name, harness, journal: harness.get(StepJournal), errors };
    }

    beforeAll(async () => {
      deployments = [await deploy('A')];
      deployments.push(await deploy('B'));
    });

    afterAll(async () => {
      for (const { harness } of deployments) await harness.close();
    });

    /** Rows of `table` in the schema of `schemaOf`, read through `via`'s connection. */
    function rows<T>(via: Deployment, schemaOf: Deployment, table: string, columns: string) {
      return via.harness.dataSource.query<T[]>(
        `SELECT ${columns} FROM "${schemaOf.harness.schema}"."${table}"`,
      );
    }

    /** Until none of `ids` is ongoing (ready or performing) in the deployment's schema. */
    async function settled(deployment: Deployment, ids: string[], deadline: number) {
      for (;;) {
        const states = await rows<{ id: string; state: string }>(
          deployment,
          deployment,
          'geneva_drive_workflows',
          'id, state',
        );
        const ongoing = states.filter(
          (row) => ids.includes(row.id) && (row.state === 'ready' || row.state === 'performing'),
        );
        if (ongoing.length === 0) return;
        if (Date.now() > deadline) {
          throw new Error(
            `deployment ${deployment.name}: ${ongoing.length} workflows still ongoing (stuck); ` +
              `errors reported: ${JSON.stringify([...new Set(deployment.errors)].slice(0, 5))}`,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }

    it(`runs ${WORKFLOWS_PER_DEPLOYMENT} three-step workflows in each at once: all finish, each in its own schema, none paused or stuck`, async () => {
      const b = deployments[1];
      await b.harness.dataSource.query(
        `SELECT setval(pg_get_serial_sequence($1, 'id'), $2::bigint, false)`,
        [`"${b.harness.schema}"."test_orders"`, SECOND_DEPLOYMENT_IDS_FROM],
      );
      const heroes = await Promise.all(
        deployments.map(({ harness }) =>
          harness.dataSource
            .getRepository(Order)
            .save(Array.from({ length: WORKFLOWS_PER_DEPLOYMENT }, () => ({ status: 'new' }))),
        ),
      );

      // Both deployments start everything at once; their workers (10 each) run the steps at once.
      const started = await Promise.all(
        deployments.map(({ harness }, d) =>
          Promise.all(
            heroes[d].map((hero) => harness.service.start(ThreeStepWorkflow, { hero })),
          ).then((workflows) => workflows.map((workflow) => workflow.id)),
        ),
      );
      // A few seconds at most when nothing is wrong; a stuck workflow never settles.
      const deadline = Date.now() + 30_000;
      for (const [d, deployment] of deployments.entries()) {
        await settled(deployment, started[d], deadline);
      }

      for (const [d, deployment] of deployments.entries()) {
        const other = deployments[1 - d];
        const ids = started[d];
        expect(deployment.errors).toEqual([]);

        // Every workflow finished, in its own schema and nowhere else.
        const workflows = await rows<{ id: string; state: string; hero_id: string }>(
          deployment,
          deployment,
          'geneva_drive_workflows',
          'id, state, hero_id',
        );
        expect(workflows.map((row) => row.id).sort()).toEqual([...ids].sort());
        expect(workflows.filter((row) => row.state !== 'finished')).toEqual([]);
        expect(workflows.map((row) => Number(row.hero_id)).sort((x, y) => x - y)).toEqual(
          heroes[d].map((hero) => hero.id),
        );
        const strays = await rows<{ id: string }>(
          deployment,
          other,
          'geneva_drive_workflows',
          'id',
        );
        expect(strays.filter((row) => ids.includes(row.id))).toEqual([]);

        // Three executions per workflow, all completed/success: nothing paused, failed or stuck.
        const executions = await rows<{
          workflow_id: string;
          step_name: string;
          state: string;
          outcome: string | null;
        }>(
          deployment,
          deployment,
          'geneva_drive_step_executions',
          'workflow_id, step_name, state, outcome',
        );
        expect(executions).toHaveLength(STEPS.length * WORKFLOWS_PER_DEPLOYMENT);
        expect(
          executions.filter(
            (row) =>
              !ids.includes(row.workflow_id) ||
              row.state !== 'completed' ||
              row.outcome !== 'success',
          ),
        ).toEqual([]);
        for (const id of ids) {
          expect(
            executions
              .filter((row) => row.workflow_id === id)
              .map((row) => row.step_name)
              .sort(),
          ).toEqual([...STEPS].sort());
        }
        const strayExecutions = await rows<{ workflow_id: string }>(
          deployment,
          other,
          'geneva_drive_step_executions',
          'workflow_id',
        );
        expect(strayExecutions.filter((row) => ids.includes(row.workflow_id))).toEqual([]);

        // Each step body ran once, in this deployment's process, on a hero of its own schema.
        const ran = deployment.journal.entries;
        expect(
          ran
            .filter((entry) => entry.startsWith('first:'))
            .map((entry) => Number(entry.slice('first:'.length)))
            .sort((x, y) => x - y),
        ).toEqual(heroes[d].map((hero) => hero.id));
        expect(ran.filter((entry) => entry === 'second')).toHaveLength(WORKFLOWS_PER_DEPLOYMENT);
        expect(ran.filter((entry) => entry === 'third')).toHaveLength(WORKFLOWS_PER_DEPLOYMENT);
      }
      // The heroes' ids tell the schemas apart.
      expect(heroes[1][0].id).toBe(SECOND_DEPLOYMENT_IDS_FROM);
    }, 60_000);
  },
);
