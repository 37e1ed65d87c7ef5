import type { MachineInfo } from './machine';
import type { BenchResult } from './result';
import type { ComparisonCheck, TargetCheck } from './targets';
import { HELD_TOLERANCE, type BaselineFigure } from './versus-baseline';

/** What `npm run bench` writes to bench/results/latest.json. */
export interface SuiteReport {
  date: string;
  totalSeconds: number;
  machine: MachineInfo | null;
  benchmarks: Array<{ name: string; seconds: number; exitCode: number | null }>;
  results: BenchResult[];
  targets: TargetCheck[];
  /** The engine's figures against DBOS Transact's of the same run. */
  comparisons: ComparisonCheck[];
  /** With BENCH_BASELINE: the same benchmarks as another commit runs them, alternating. */
  baseline?: {
    ref: string;
    sha: string;
    rounds: number;
    results: BenchResult[];
    figures: BaselineFigure[];
  };
}

const cell = (value: unknown) => String(value).replace(/\|/g, '\\|');
const row = (cells: unknown[]) => `| ${cells.map(cell).join(' | ')} |`;
const table = (header: string[], rows: unknown[][]) => [
  row(header),
  row(header.map(() => '---')),
  ...rows.map(row),
];
const describe = (parameters: Record<string, unknown>) =>
  Object.entries(parameters)
    .map(([key, value]) => `${key} ${String(value)}`)
    .join(', ');

/**
 * The suite's results as markdown: targets, the comparisons with DBOS Transact, the floor,
 * scale-out, every figure, the SQL, durations.
 */
export function renderSummary(report: SuiteReport): string {
  const byName = (name: string) => report.results.filter((result) => result.name === name);
  return [
    '# nestjs-geneva-drive benchmarks',
    '',
    header(report),
    '',
    '## Targets',
    '',
    ...table(
      ['Benchmark', 'Parameters', 'Figure', 'Value', 'Target', 'Value ÷ target', 'Met'],
      report.targets.map((check) => [
        check.benchmark,
        describe(check.parameters),
        check.label,
        check.value,
        `${check.better === 'higher' ? '≥' : '≤'} ${check.goal}`,
        check.ratio ?? '–',
        check.met ? 'yes' : 'no',
      ]),
    ),
    '',
    ...targetReach(report.targets),
    ...versusDbos(report.comparisons),
    ...versusBaseline(report.baseline),
    '## Engine against raw BullMQ chains (the floor)',
    '',
    ...table(
      [
        'Benchmark',
        'Workflows × steps',
        'Concurrency',
        'Engine steps/s',
        'Floor steps/s',
        'Engine ÷ floor',
        'Gap p50 / p99 ms',
        'Floor gap p50 / p99 ms',
      ],
      [...byName('hop'), ...byName('throughput')].map(({ name, parameters, metrics }) => [
        name,
        `${String(parameters.workflows)} × ${String(parameters.steps)}`,
        parameters.concurrency,
        metrics.stepsPerSecond,
        metrics.floorStepsPerSecond,
        metrics.shareOfFloor,
        `${metrics.gapP50Ms} / ${metrics.gapP99Ms}`,
        `${metrics.floorGapP50Ms} / ${metrics.floorGapP99Ms}`,
      ]),
    ),
    '',
    ...scaleOut(byName('scale-out')),
    '## Every result (the median of the runs, then each run)',
    '',
    ...report.results.flatMap(resultSection),
    ...regularStepSql(byName('sql-per-step')[0]),
    '## Durations',
    '',
    ...table(
      ['Benchmark', 'Seconds', 'Exit code'],
      [
        ...report.benchmarks.map(({ name, seconds, exitCode }) => [
          name,
          seconds,
          exitCode ?? 'killed',
        ]),
        ['total', report.totalSeconds, ''],
      ],
    ),
    '',
  ].join('\n');
}

function header(report: SuiteReport): string {
  const machine = report.machine;
  const where = machine
    ? `${machine.cpus} × ${machine.cpuModel}, ${machine.totalMemoryGb} GB, ${machine.os}; Node ${machine.node}, ` +
      `PostgreSQL ${machine.postgres}, Redis ${machine.redis}; load average ${machine.loadAverage} when the first benchmark started`
    : 'machine unknown (no benchmark reported)';
  return `${report.date}, ${report.totalSeconds} s in all. ${where}.`;
}

function versusDbos(checks: ComparisonCheck[]): string[] {
  if (checks.length === 0) return [];
  return [
    '## Against DBOS Transact, measured in the same run',
    '',
    ...table(
      ['Benchmark', 'Parameters', 'Figure', 'Ours', 'DBOS', 'Ours ÷ DBOS', 'Target', 'Met'],
      checks.map((check) => [
        `${check.benchmark} vs ${check.versus.benchmark}`,
        describe(check.parameters),
        check.label,
        check.value,
        check.versusValue,
        check.ratio,
        `${check.better === 'higher' ? '≥' : '≤'} ${check.factor} × DBOS`,
        check.met ? 'yes' : 'no',
      ]),
    ),
    '',
    ...reachOf(checks),
  ];
}

/** The targets whose figure has a bound: the most (or least) it could be, set against the goal. */
function targetReach(checks: TargetCheck[]): string[] {
  const bounded = checks.filter((check) => check.bound && check.reach);
  if (bounded.length === 0) return [];
  return [
    '### What bounds each bounded target, measured in the same run',
    '',
    ...table(
      ['Figure', 'Bound', 'Value', 'Target', 'Within reach'],
      bounded.map((check) => [
        check.label,
        check.bound?.label,
        check.reach?.value,
        `${check.better === 'higher' ? '≥' : '≤'} ${check.goal}`,
        check.reach?.reachable ? 'yes' : 'no',
      ]),
    ),
    '',
  ];
}

/** The comparisons whose figure has a bound: the least it could be, set against the target. */
function reachOf(checks: ComparisonCheck[]): string[] {
  const bounded = checks.filter((check) => check.bound && check.reach);
  if (bounded.length === 0) return [];
  return [
    '### The least each bounded figure could be, measured in the same run',
    '',
    ...table(
      ['Figure', 'Least possible', 'Ms', '÷ DBOS', 'Target', 'Within reach'],
      bounded.map((check) => [
        check.label,
        check.bound?.label,
        check.reach?.value,
        check.reach?.ratio,
        `≤ ${check.factor} × DBOS`,
        check.reach?.reachable ? 'yes' : 'no',
      ]),
    ),
    '',
  ];
}

function versusBaseline(baseline: SuiteReport['baseline']): string[] {
  if (!baseline) return [];
  const percent = HELD_TOLERANCE * 100;
  return [
    `## Against the baseline ${baseline.ref} (${baseline.sha.slice(0, 10)}), alternating, ${baseline.rounds} round${baseline.rounds === 1 ? '' : 's'}`,
    '',
    `Each figure is the median of both sides' runs over all rounds. Held: the hot path's figures ` +
      `(throughput steps/s, hop ms per step) within ${percent}% of the baseline's or better.`,
    '',
    ...table(
      ['Benchmark', 'Parameters', 'Figure', 'Baseline', 'This checkout', 'Ratio', 'Held'],
      [...baseline.figures]
        .sort((a, b) => Number(b.held !== undefined) - Number(a.held !== undefined))
        .map((figure) => [
          figure.benchmark,
          describe(figure.parameters),
          figure.metric,
          figure.baseline,
          figure.current,
          figure.ratio ?? '–',
          figure.held === undefined ? '' : figure.held ? 'yes' : 'no',
        ]),
    ),
    '',
  ];
}

function scaleOut(results: BenchResult[]): string[] {
  if (results.length === 0) return [];
  const base = results[0].metrics.stepsPerSecond;
  return [
    '## Scale-out',
    '',
    ...table(
      ['Worker processes', 'Steps/s', `× ${String(results[0].parameters.workers)} worker(s)`],
      results.map(({ parameters, metrics }) => [
        parameters.workers,
        metrics.stepsPerSecond,
        Math.round((metrics.stepsPerSecond / base) * 100) / 100,
      ]),
    ),
    '',
  ];
}

function resultSection(result: BenchResult): string[] {
  return [
    `### ${result.name} (${describe(result.parameters)})`,
    '',
    ...table(
      ['Metric', 'Median', 'Runs'],
      Object.entries(result.metrics).map(([metric, median]) => [
        metric,
        median,
        result.runs.map((run) => run[metric]).join(', '),
      ]),
    ),
    '',
  ];
}

function regularStepSql(result: BenchResult | undefined): string[] {
  const statements = result?.details?.regularStep;
  if (!Array.isArray(statements)) return [];
  return [
    '## The SQL of one regular step, in order',
    '',
    ...statements.map((sql, index) => `${index + 1}. \`${String(sql)}\``),
    '',
  ];
}
