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
