/**
 * A worker process of a benchmark's deployment, forked by `ForkedWorker`: a real app consuming
 * the default queue on the parent's schema and prefix (BENCH_SCHEMA, BENCH_PREFIX) with
 * BENCH_CONCURRENCY. Talks to the parent over IPC: sends `ready`, then `finished` for every
 * workflow it finishes; answers `memory` (after a full GC) and closes its app on `stop` or when
 * the parent goes away.
 */
import 'reflect-metadata';
import { bootEngine } from './engine';
import { envInteger } from './env';
import { onWorkflowFinished } from './finish-line';
import { DEPLOYMENT_WORKFLOWS } from './deployment.workflows';
import type { ParentMessage, WorkerMessage } from './worker.messages';

function send(message: WorkerMessage): void {
  process.send?.(message);
}

async function main(): Promise<void> {
  const schema = process.env.BENCH_SCHEMA;
  const prefix = process.env.BENCH_PREFIX;
  if (!schema || !prefix)
    throw new Error('BENCH_SCHEMA and BENCH_PREFIX name the deployment to join.');
  const harness = await bootEngine({
    workflows: DEPLOYMENT_WORKFLOWS,
    concurrency: envInteger('BENCH_CONCURRENCY', 10),
    reuse: { schema, prefix },
  });
  const unwatch = onWorkflowFinished((id) => send({ type: 'finished', id }));
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    unwatch();
    harness.closeApp().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('message', (message: ParentMessage) => {
    if (message.type === 'stop') return stop();
    // Only garbage should be gone: run the collector before reading the footprint.
    global.gc?.();
    const { rss, heapUsed } = process.memoryUsage();
    send({ type: 'memory', rss, heapUsed });
  });
  // A parent that died must not leave a worker consuming its queue.
  process.once('disconnect', stop);
  send({ type: 'ready' });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
