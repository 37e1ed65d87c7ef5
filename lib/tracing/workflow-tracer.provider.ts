import type { Provider } from '@nestjs/common';
import { ModuleOptionsError } from '../errors/module-options.error';
import { GENEVA_DRIVE_RESOLVED_OPTIONS } from '../options/resolved-options.token';
import type { ResolvedGenevaDriveOptions } from '../options/resolved-options.interface';
import { NoopWorkflowTracer } from './noop-workflow.tracer';
import { OpenTelemetryWorkflowTracer } from './open-telemetry-workflow.tracer';
import { WorkflowTracer } from './workflow-tracer';

/**
 * The no-op tracer unless `tracing: true`; then `@opentelemetry/api`, loaded here and only here
 * (an optional peer), or a boot failure naming the install.
 */
export async function createWorkflowTracer(tracing: boolean): Promise<WorkflowTracer> {
  if (!tracing) return new NoopWorkflowTracer();
  let api: typeof import('@opentelemetry/api');
  try {
    api = await import('@opentelemetry/api');
  } catch (error) {
    throw new ModuleOptionsError(
      `GenevaDriveModule: tracing: true needs @opentelemetry/api, which could not be loaded (${(error as Error).message}). ` +
        'Install it (npm install @opentelemetry/api) and register a tracer provider, or drop tracing: true.',
    );
  }
  return new OpenTelemetryWorkflowTracer(api);
}

export const workflowTracerProvider: Provider = {
  provide: WorkflowTracer,
  useFactory: (options: ResolvedGenevaDriveOptions) => createWorkflowTracer(options.tracing),
  inject: [GENEVA_DRIVE_RESOLVED_OPTIONS],
};
