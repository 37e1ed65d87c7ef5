/**
 * Job ids derive from the execution id so a redelivered job is recognized: `<id>` on the first
 * enqueue, `<id>_<n>` on each re-enqueue (BullMQ ignores an add whose id already exists).
 */
export function nextJobId(executionId: string, currentJobId: string | null): string {
  if (!currentJobId || !currentJobId.startsWith(executionId)) return `${executionId}_1`;
  const suffix = currentJobId.slice(executionId.length + 1);
  const n = suffix === '' ? 0 : Number(suffix);
  return `${executionId}_${Number.isInteger(n) ? n + 1 : 1}`;
}

/**
 * The job id of a wait-timeout job, unique per arming: a timer armed again (a resume after the
 * workflow was paused while waiting) must not be taken for the finished job of the first one.
 */
export function waitTimeoutJobId(executionId: string, armedAt: Date): string {
  return `${executionId}_timeout_${armedAt.getTime()}`;
}
