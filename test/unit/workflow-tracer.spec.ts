import { ModuleOptionsError } from '../../lib';
import type { PreparedStep } from '../../lib/runner/prepared-step.interface';
import { NoopClsContextBridge } from '../../lib/tracing/cls-context.bridge';
import { createClsContextBridge } from '../../lib/tracing/cls-context.provider';
import { NoopWorkflowTracer } from '../../lib/tracing/noop-workflow.tracer';
import { OpenTelemetryWorkflowTracer } from '../../lib/tracing/open-telemetry-workflow.tracer';
import { formatTraceParent, parseTraceParent } from '../../lib/tracing/trace-parent';
import { createWorkflowTracer } from '../../lib/tracing/workflow-tracer.provider';

const PREPARED = {} as PreparedStep;

describe('the workflow tracer', () => {
  afterEach(() => {
    jest.dontMock('@opentelemetry/api');
    jest.dontMock('nestjs-cls');
  });

  it('is the no-op tracer when tracing is off, without loading @opentelemetry/api', async () => {
    jest.doMock('@opentelemetry/api', () => {
      throw new Error('@opentelemetry/api must not be loaded with tracing off');
    });
    const tracer = await createWorkflowTracer(false);
    expect(tracer).toBeInstanceOf(NoopWorkflowTracer);
    expect(tracer.enabled).toBe(false);
    await expect(
      tracer.inCallSpan('geneva_drive.start', {}, (parent) => Promise.resolve(parent)),
    ).resolves.toBeNull();
    const handed: unknown[] = [];
    for (let i = 0; i < 2; i++) {
      await tracer.inStepSpan(PREPARED, (span) => {
        handed.push(span);
        span.end('completed', null);
        return Promise.resolve();
      });
    }
    // One shared span object: nothing is allocated per step.
    expect(handed[0]).toBe(handed[1]);
  });

  it('passes results and rejections of the no-op spans straight through', async () => {
    const tracer = new NoopWorkflowTracer();
    await expect(tracer.inStepSpan(PREPARED, () => Promise.resolve(42))).resolves.toBe(42);
    await expect(
      tracer.inCallSpan('x', {}, () => Promise.reject(new Error('boom'))),
    ).rejects.toThrow('boom');
  });

  it('is the OpenTelemetry tracer when tracing is on', async () => {
    expect(await createWorkflowTracer(true)).toBeInstanceOf(OpenTelemetryWorkflowTracer);
  });

  it('fails the boot naming the install when tracing is on and @opentelemetry/api is missing', async () => {
    jest.doMock('@opentelemetry/api', () => {
      throw new Error("Cannot find module '@opentelemetry/api'");
    });
    const boot = createWorkflowTracer(true);
    await expect(boot).rejects.toThrow(ModuleOptionsError);
    await expect(createWorkflowTracer(true)).rejects.toThrow(/npm install @opentelemetry\/api/);
  });
});

describe('the CLS bridge', () => {
  it('is the no-op bridge without keys, without loading nestjs-cls', async () => {
    jest.doMock('nestjs-cls', () => {
      throw new Error('nestjs-cls must not be loaded without the cls option');
    });
    const bridge = await createClsContextBridge([]);
    expect(bridge).toBeInstanceOf(NoopClsContextBridge);
    expect(bridge.capture()).toBeNull();
    await expect(bridge.run({ a: 1 }, () => Promise.resolve('ran'))).resolves.toBe('ran');
    jest.dontMock('nestjs-cls');
  });

  it('fails the boot naming the install when cls is set and nestjs-cls is missing', async () => {
    jest.doMock('nestjs-cls', () => {
      throw new Error("Cannot find module 'nestjs-cls'");
    });
    await expect(createClsContextBridge(['requestId'])).rejects.toThrow(ModuleOptionsError);
    await expect(createClsContextBridge(['requestId'])).rejects.toThrow(/npm install nestjs-cls/);
    jest.dontMock('nestjs-cls');
  });
});

describe('traceparent', () => {
  it('round-trips a span context and refuses anything else', () => {
    const parts = {
      traceId: '0af7651916cd43dd8448eb211c80319c',
      spanId: 'b7ad6b7169203331',
      traceFlags: 1,
    };
    expect(formatTraceParent(parts)).toBe(
      '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
    );
    expect(parseTraceParent(formatTraceParent(parts))).toEqual(parts);
    expect(parseTraceParent(null)).toBeNull();
    expect(parseTraceParent('00-00000000000000000000000000000000-b7ad6b7169203331-01')).toBeNull();
    expect(parseTraceParent('01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01')).toBeNull();
    expect(parseTraceParent('garbage')).toBeNull();
  });
});
