/**
 * `npm run bench:tracing`: what `tracing: true` costs per step. Two apps on PostgreSQL + BullMQ
 * (fresh schemas and prefixes), one with tracing off and one with it on (the OpenTelemetry SDK's
 * BasicTracerProvider exporting to memory), run the same BENCH_WORKFLOWS (default 20) chains of
 * BENCH_STEPS trivial steps (default 20), alternately, BENCH_RUNS times (default 3). One JSON
 * line: ms per step off and on, and the overhead ratio (on / off), medians over the runs.
 */
import { trace } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import type { EngineHarness } from '../test/e2e/support/engine-harness';
import { chainWorkflow } from './support/bench.workflows';
import { createOrders } from './support/dataset';
import { bootEngine, DEFAULT_CONCURRENCY, runWorkflows } from './support/engine';
import { envInteger, runCount } from './support/env';
import { FinishLine } from './support/finish-line';
import { runBenchmark } from './support/main';
import { emit } from './support/result';

const WORKFLOWS = envInteger('BENCH_WORKFLOWS', 20);
const STEPS = envInteger('BENCH_STEPS', 20);
const TracingWorkflow = chainWorkflow('TracingBenchWorkflow', STEPS, null);

runBenchmark(async () => {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  trace.setGlobalTracerProvider(provider);
  const finishLine = new FinishLine();
  const unwatch = finishLine.watchEngine();
  const off = await bootEngine({ workflows: [TracingWorkflow] });
  const on = await bootEngine({ workflows: [TracingWorkflow], tracing: true });
  const msPerStep = async (harness: EngineHarness, workflows: number) => {
    const orders = await createOrders(harness.dataSource, workflows);
    const ms = await runWorkflows(harness, TracingWorkflow, orders, finishLine);
    return ms / (workflows * STEPS);
  };
  try {
    // Unmeasured warm-up of both apps (JIT, first connections).
    await msPerStep(off, 2);
    await msPerStep(on, 2);
    const runs = [];
    for (let index = 0; index < runCount(); index++) {
      exporter.reset();
      const offMs = await msPerStep(off, WORKFLOWS);
      const onMs = await msPerStep(on, WORKFLOWS);
      const spans = exporter.getFinishedSpans().filter((span) => span.name === 'geneva_drive.step');
      if (spans.length < WORKFLOWS * STEPS) {
        throw new Error(
          `tracing on recorded ${spans.length} step spans, expected ${WORKFLOWS * STEPS}`,
        );
      }
      runs.push({ offMsPerStep: offMs, onMsPerStep: onMs, overheadRatio: onMs / offMs });
    }
    await emit(
      'tracing',
      { workflows: WORKFLOWS, steps: STEPS, concurrency: DEFAULT_CONCURRENCY },
      runs,
    );
  } finally {
    unwatch();
    await off.close();
    await on.close();
    await provider.shutdown();
  }
});
