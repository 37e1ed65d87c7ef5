import { AsyncLocalStorage } from 'node:async_hooks';

/** Scopes `withInlineEnqueue()`: inside it, jobs are enqueued at once instead of after commit. */
export const inlineEnqueueStorage = new AsyncLocalStorage<boolean>();

export function isInlineEnqueue(): boolean {
  return inlineEnqueueStorage.getStore() === true;
}
