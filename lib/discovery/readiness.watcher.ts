import { Injectable } from '@nestjs/common';

/**
 * Resolves once discovery and validation are done. BullMQ workers start during `onModuleInit`,
 * so a job can arrive before the registry is filled: the runner waits on this instead of failing.
 */
@Injectable()
export class ReadinessWatcher {
  private resolveReady!: () => void;
  private rejectReady!: (error: Error) => void;
  readonly ready: Promise<void> = new Promise<void>((resolve, reject) => {
    this.resolveReady = resolve;
    this.rejectReady = reject;
  });

  constructor() {
    // A failed boot rejects `ready`; nobody may be waiting yet, so keep that from being unhandled.
    this.ready.catch(() => undefined);
  }

  markReady(): void {
    this.resolveReady();
  }

  markFailed(error: Error): void {
    this.rejectReady(error);
  }
}
