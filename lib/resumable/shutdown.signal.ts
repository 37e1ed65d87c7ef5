import { Injectable } from '@nestjs/common';

/**
 * Raised in `beforeApplicationShutdown`: resumable steps stop at their next checkpoint so the
 * workers can close without losing progress, and a successor continues after the deploy.
 */
@Injectable()
export class ShutdownSignal {
  private raised = false;

  get requested(): boolean {
    return this.raised;
  }

  raise(): void {
    this.raised = true;
  }
}
