import { Injectable, type OnModuleInit } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { ModuleOptionsError } from '../errors/module-options.error';
import { GENEVA_DRIVE_REAL_MODULE_MARKER } from '../common/constants';

/**
 * Fails boot when `GenevaDriveModule` is imported together with `GenevaDriveTestingModule`. The
 * two provide the same services, so one silently wins, while the real one still connects to Redis
 * and keeps its workers' connections open (a test run that never exits). Runs at `onModuleInit`,
 * before any worker starts (`onApplicationBootstrap`); `app.close()` closes what the real module
 * opened.
 */
@Injectable()
export class ModuleExclusivityCheck implements OnModuleInit {
  constructor(private readonly moduleRef: ModuleRef) {}

  onModuleInit(): void {
    if (!this.realModuleImported()) return;
    throw new ModuleOptionsError(
      'GenevaDriveModule and GenevaDriveTestingModule are both imported. The testing module replaces ' +
        'the real one (same services, an in-process queue instead of BullMQ): import only ' +
        'GenevaDriveTestingModule.forRoot() in the test, e.g. by building the test module from a ' +
        'module that does not import GenevaDriveModule.',
    );
  }

  private realModuleImported(): boolean {
    try {
      this.moduleRef.get(GENEVA_DRIVE_REAL_MODULE_MARKER, { strict: false });
      return true;
    } catch {
      return false;
    }
  }
}
