import type { BullmqQueueHandle } from './bullmq-queue.source';

/** Resolves once the queue's connection is ready, or after at most 2 s (transport unreachable). */
export async function untilReady(queue: Pick<BullmqQueueHandle, 'waitUntilReady'>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    queue.waitUntilReady().then(
      () => undefined,
      () => undefined,
    ),
    new Promise<void>((resolve) => (timer = setTimeout(resolve, 2_000))),
  ]);
  clearTimeout(timer);
}
