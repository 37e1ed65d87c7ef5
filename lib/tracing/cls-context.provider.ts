import type { Provider } from '@nestjs/common';
import { ModuleOptionsError } from '../errors/module-options.error';
import { GENEVA_DRIVE_RESOLVED_OPTIONS } from '../options/resolved-options.token';
import type { ResolvedGenevaDriveOptions } from '../options/resolved-options.interface';
import { ClsContextBridge, NoopClsContextBridge } from './cls-context.bridge';
import { NestjsClsContextBridge } from './nestjs-cls-context.bridge';

/** The no-op bridge without `cls`; with it nestjs-cls, loaded here only, or a boot failure. */
export async function createClsContextBridge(keys: readonly string[]): Promise<ClsContextBridge> {
  if (keys.length === 0) return new NoopClsContextBridge();
  let cls: typeof import('nestjs-cls');
  try {
    cls = await import('nestjs-cls');
  } catch (error) {
    throw new ModuleOptionsError(
      `GenevaDriveModule: cls: { keys } needs nestjs-cls, which could not be loaded (${(error as Error).message}). ` +
        'Install it (npm install nestjs-cls) and import ClsModule.forRoot(), or drop the cls option.',
    );
  }
  return new NestjsClsContextBridge(cls.ClsServiceManager, keys);
}

export const clsContextBridgeProvider: Provider = {
  provide: ClsContextBridge,
  useFactory: (options: ResolvedGenevaDriveOptions) => createClsContextBridge(options.clsKeys),
  inject: [GENEVA_DRIVE_RESOLVED_OPTIONS],
};
