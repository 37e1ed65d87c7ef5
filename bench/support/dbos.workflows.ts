import { performance } from 'node:perf_hooks';
import { DBOS } from '@dbos-inc/dbos-sdk';
import type { StepTimeline } from './step-timeline';

/** The topic the wake benchmark sends on and waits for, as the engine's signal is named `go`. */
export const DBOS_WAKE_TOPIC = 'go';
/** How long a parked DBOS workflow waits in `recv()` before giving up (a run takes seconds). */
const RECV_TIMEOUT_SECONDS = 600;

/**
 * DBOS Transact's counterpart of `chainWorkflow` (bench.workflows.ts): a workflow of `steps`
 * trivial in-process steps, each a registered step (checkpointed by DBOS) recording its body's
 * start and end on `timeline` under the workflow's argument, `chain`. No hero: DBOS has none to
 * load. Registered as `name`; call before `launchDbos`.
 */
export function dbosChainWorkflow(
  name: string,
  steps: number,
  timeline: StepTimeline,
): (chain: string) => Promise<void> {
  const tick = DBOS.registerStep(
    (chain: string, index: number) => {
      const startedAt = performance.now();
      timeline.record(chain, index, startedAt, performance.now());
      return Promise.resolve();
    },
    { name: `${name}.tick` },
  );
  return DBOS.registerWorkflow(
    async (chain: string) => {
      for (let index = 0; index < steps; index++) await tick(chain, index);
    },
    { name },
  );
}

/**
 * DBOS Transact's counterpart of `parkedWorkflow`: calls `onParked` with its argument, waits in
 * `DBOS.recv()` for a message on `DBOS_WAKE_TOPIC`, then runs one step that calls `onWake` first
 * thing in its body. Started with its own id as the argument. Registered as `name`; call before
 * `launchDbos`.
 */
export function dbosParkedWorkflow(
  name: string,
  onParked: (workflowId: string) => void,
  onWake: (workflowId: string) => void,
): (workflowId: string) => Promise<void> {
  const wake = DBOS.registerStep(
    (workflowId: string) => {
      onWake(workflowId);
      return Promise.resolve();
    },
    { name: `${name}.wake` },
  );
  return DBOS.registerWorkflow(
    async (workflowId: string) => {
      onParked(workflowId);
      const message = await DBOS.recv<string>(DBOS_WAKE_TOPIC, {
        timeoutSeconds: RECV_TIMEOUT_SECONDS,
      });
      if (message === null) {
        throw new Error(
          `DBOS workflow ${workflowId} received nothing in ${RECV_TIMEOUT_SECONDS} s.`,
        );
      }
      await wake(workflowId);
    },
    { name },
  );
}
