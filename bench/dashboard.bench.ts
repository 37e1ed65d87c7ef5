/**
 * `npm run bench:dashboard`: the operator dashboard's pages at BENCH_DASHBOARD_WORKFLOWS workflows
 * (default 1,000,000) and BENCH_DASHBOARD_EXECUTIONS executions (default 10,000,000), in a
 * dedicated PostgreSQL schema dropped afterwards. Builds the dataset once (dashboard-dataset.ts),
 * boots an app with `GenevaDriveDashboardModule` on a real HTTP port and times each route over
 * plain HTTP: list pages (first, filtered, BENCH_DASHBOARD_PAGES pages followed by their `next`
 * links, a keyset page half way down), the bulk actions' dry-run count and one workflow's
 * timeline (JSON and HTML). An unmeasured round records the statements each route sends; each
 * one is EXPLAIN ANALYZEd, and a Seq Scan on a library table fails the benchmark (exit 1). One
 * JSON line, medians over BENCH_RUNS runs (default 3), the plans under `details`.
 */
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { GenevaDriveDashboardModule } from '../lib/dashboard';
import { encodePageStart } from '../lib/dashboard/workflow-filter';
import {
  SIGNALS_TABLE,
  STEP_EXECUTIONS_TABLE,
  WORKFLOWS_TABLE,
} from '../lib/migrations/migration.constants';
import { GenevaDriveTestingModule } from '../lib/testing';
import { createSchema, dataSourceOptions, dropSchema } from '../test/e2e/support/database';
import {
  DASHBOARD_CLASSES,
  DASHBOARD_STEPS,
  generateDashboardDataset,
  type DashboardDataset,
} from './dashboard-dataset';
import { explainAnalyze, planNodes, renderPlan } from './housekeeping-dataset';
import { envInteger, runCount } from './support/env';
import { runBenchmark } from './support/main';
import { emit, repeatRuns, type Metrics } from './support/result';
import { median, round } from './support/stats';
import { StatementRecorder, type RecordedStatement } from './support/statement-recorder';

const WORKFLOWS = envInteger('BENCH_DASHBOARD_WORKFLOWS', 1_000_000);
const EXECUTIONS = envInteger('BENCH_DASHBOARD_EXECUTIONS', 10_000_000);
const PAGES = envInteger('BENCH_DASHBOARD_PAGES', 20);
const MOUNT = '/geneva-drive';
const LIBRARY_TABLES = [WORKFLOWS_TABLE, STEP_EXECUTIONS_TABLE, SIGNALS_TABLE];

/** One timed request: a list page, the bulk count or the timeline. */
interface Route {
  name: string;
  kind: 'list' | 'count' | 'timeline';
  /** Under the mount point. */
  path: string;
}

/** A statement's plan, reduced to what the check and the reader need. */
interface StatementPlan {
  sql: string;
  indexes: string[];
  seqScans: string[];
  executionMs: number;
  plan: string[];
}

function query(pairs: Record<string, string>): string {
  return `?${new URLSearchParams(pairs).toString()}`;
}

/** The routes, pointed at rows the dataset holds. */
function routesFor(dataset: DashboardDataset): Route[] {
  const { middleWorkflow: middle, timelineWorkflow: timeline } = dataset;
  const rareClass = DASHBOARD_CLASSES.at(-1)!.type;
  const list = (name: string, pairs: Record<string, string> = {}): Route => ({
    name,
    kind: 'list',
    path: `/api/workflows${query(pairs)}`,
  });
  return [
    list('listFirstPage'),
    { name: 'listFirstPageHtml', kind: 'list', path: '/' },
    list('listStatePage', { state: 'paused' }),
    list('listClassPage', { class: rareClass }),
    list('listStateClassPage', { state: 'ready', class: DASHBOARD_CLASSES[3].type }),
    list('listHeroPage', { heroType: middle.heroType, heroId: middle.heroId }),
    list('listTextHeroPage', { q: middle.heroId }),
    list('listTextIdPage', { q: middle.id }),
    list('listStepPage', { step: DASHBOARD_STEPS[4] }),
    list('listWaitingPage', { waitingLongerThan: '7d' }),
    list('listDeepPage', { after: encodePageStart(middle) }),
    {
      name: 'bulkCountState',
      kind: 'count',
      path: `/api/bulk/resume${query({ state: 'paused' })}`,
    },
    {
      name: 'bulkCountStateClass',
      kind: 'count',
      path: `/api/bulk/cancel${query({ state: 'ready', class: DASHBOARD_CLASSES[0].type })}`,
    },
    { name: 'timelineApi', kind: 'timeline', path: `/api/workflows/${timeline.id}` },
    { name: 'timelineHtml', kind: 'timeline', path: `/workflows/${timeline.id}` },
  ];
}

/** GETs `url`, reads the whole body; resolves the body and the milliseconds it took. */
async function timedGet(url: string): Promise<{ body: string; ms: number }> {
  const started = performance.now();
  const response = await fetch(url);
  const body = await response.text();
  const ms = performance.now() - started;
  if (response.status !== 200) {
    throw new Error(`GET ${url} answered ${response.status}: ${body.slice(0, 300)}`);
  }
  return { body, ms };
}

/** Follows `next` from the first page PAGES times; resolves each page's time and the last URL. */
async function followPages(origin: string): Promise<{ pageMs: number[]; lastUrl: string }> {
  let url = `${origin}${MOUNT}/api/workflows`;
  const pageMs: number[] = [];
  for (let page = 0; page <= PAGES; page++) {
    const { body, ms } = await timedGet(url);
    if (page > 0) pageMs.push(ms);
    const { next } = JSON.parse(body) as { next: string | null };
    if (next === null) break;
    url = `${origin}${MOUNT}/api/workflows${query({ after: next })}`;
  }
  return { pageMs, lastUrl: url };
}

/** The plan of one recorded statement. */
async function planOf(
  dataSource: DataSource,
  statement: RecordedStatement,
): Promise<StatementPlan> {
  const { plan, executionMs } = await explainAnalyze(dataSource, [
    statement.sql,
    statement.parameters,
  ]);
  const nodes = planNodes(plan);
  return {
    sql: statement.sql.replace(/\s+/g, ' ').trim(),
    indexes: [...new Set(nodes.flatMap((node) => node['Index Name'] ?? []))],
    seqScans: nodes
      .filter((node) => node['Node Type'] === 'Seq Scan')
      .map((node) => node['Relation Name'] ?? '?')
      .filter((relation) => LIBRARY_TABLES.includes(relation)),
    executionMs: round(executionMs),
    plan: renderPlan(plan),
  };
}

/** Requests every route once while recording, and EXPLAIN ANALYZEs each SELECT it sent. */
async function explainRoutes(
  dataSource: DataSource,
  recorder: StatementRecorder,
  origin: string,
  routes: Route[],
): Promise<Record<string, StatementPlan[]>> {
  const plans: Record<string, StatementPlan[]> = {};
  const explain = async (name: string, url: string) => {
    const { statements } = await recorder.record(() => timedGet(url));
    const selects = statements.filter(({ sql }) => /^\s*SELECT\b/i.test(sql));
    plans[name] = [];
    for (const statement of selects) plans[name].push(await planOf(dataSource, statement));
  };
  for (const route of routes) await explain(route.name, `${origin}${MOUNT}${route.path}`);
  const { lastUrl } = await followPages(origin);
  await explain('listNextPages', lastUrl);
  return plans;
}

/** One measured run: each route once, then the pages followed. */
async function measureRun(origin: string, routes: Route[]): Promise<Metrics> {
  const metrics: Metrics = {};
  for (const route of routes) {
    metrics[`${route.name}Ms`] = round((await timedGet(`${origin}${MOUNT}${route.path}`)).ms);
  }
  const { pageMs } = await followPages(origin);
  metrics.listNextPagesMs = round(median(pageMs));
  const listNames = [...routes.filter((route) => route.kind === 'list'), { name: 'listNextPages' }];
  metrics.slowestListPageMs = Math.max(...listNames.map(({ name }) => metrics[`${name}Ms`]));
  return metrics;
}

async function boot(schema: string): Promise<INestApplication> {
  const moduleRef = await Test.createTestingModule({
    imports: [
      TypeOrmModule.forRoot(dataSourceOptions(schema)),
      GenevaDriveTestingModule.forRoot(),
      // Writable, so the bulk dry runs (refused on a read-only dashboard) answer their count.
      GenevaDriveDashboardModule.forRoot({ readOnly: false, authorize: () => true }),
    ],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.listen(0, '127.0.0.1');
  return app;
}

runBenchmark(async () => {
  const executionsPerWorkflow = Math.max(1, Math.round(EXECUTIONS / WORKFLOWS));
  const schema = await createSchema('gd_bench_dash');
  let app: INestApplication | undefined;
  try {
    app = await boot(schema);
    const dataSource = app.get(DataSource);
    const origin = `http://127.0.0.1:${(app.getHttpServer() as { address(): AddressInfo }).address().port}`;
    const dataset = await generateDashboardDataset(dataSource, WORKFLOWS, executionsPerWorkflow);
    process.stderr.write(
      `dashboard dataset: ${dataset.workflows} workflows, ${dataset.executions} executions, ` +
        `${dataset.signals} signals in ${round(dataset.generateMs / 1000, 1)} s ` +
        `(+ ${round(dataset.vacuumMs / 1000, 1)} s VACUUM ANALYZE)\n`,
    );
    const routes = routesFor(dataset);
    const recorder = StatementRecorder.install(dataSource);
    // The unmeasured round: warms the caches and records what each route sends.
    const plans = await explainRoutes(dataSource, recorder, origin, routes);
    const seqScans = Object.entries(plans).flatMap(([name, statements]) =>
      statements.flatMap((statement) => statement.seqScans.map((table) => `${name}: ${table}`)),
    );
    const runs = await repeatRuns(runCount(), async () => ({
      ...(await measureRun(origin, routes)),
      seqScans: seqScans.length,
      generateMs: dataset.generateMs,
      vacuumMs: dataset.vacuumMs,
    }));
    await emit(
      'dashboard',
      {
        workflows: dataset.workflows,
        executions: dataset.executions,
        signals: dataset.signals,
        pagesFollowed: PAGES,
      },
      runs,
      { states: dataset.states, routes, plans },
    );
    if (seqScans.length > 0) {
      process.stderr.write(`Seq Scan on a library table: ${seqScans.join(', ')}\n`);
      return false;
    }
    return true;
  } finally {
    await app?.close();
    await dropSchema(schema);
  }
});
