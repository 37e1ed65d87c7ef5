import type { Type } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import {
  CancelIf,
  ExceptionPolicy,
  RemovedStep,
  ResumableStep,
  SignalMatcher,
  Step,
  StepConfigurationError,
  Workflow,
  type ResumableStepOptions,
  type WorkflowOptions,
} from '../../lib';
import { ReadinessWatcher } from '../../lib/discovery/readiness.watcher';
import { WorkflowExplorer } from '../../lib/discovery/workflow.explorer';
import { WorkflowMetadataAccessor } from '../../lib/discovery/workflow-metadata.accessor';
import { WorkflowRegistry } from '../../lib/discovery/workflow.registry';
import { Order } from '../fixtures/order.entity';
import { CheckLog } from './support/bad-input.support';

/**
 * Issue #9 item 6, "Bad input" for decorator options: every bad `@Workflow`, `@Step`,
 * `@ResumableStep`, `@CancelIf` (and `@RemovedStep`) option fails discovery at boot with a
 * `StepConfigurationError` naming the workflow, the step and the fix; `new ExceptionPolicy(...)`
 * and `new SignalMatcher(...)` throw it at construction. Nothing can be written: the app never
 * finishes booting (the workflow discovery runs alone here, without a database).
 */
const log = new CheckLog('bad decorator options');

/** Runs workflow discovery (the explorer's onModuleInit) over `workflows`; resolves the error. */
async function discoveryError(workflows: Array<Type<object>>): Promise<Error | null> {
  const moduleRef = await Test.createTestingModule({
    imports: [DiscoveryModule],
    providers: [
      WorkflowMetadataAccessor,
      WorkflowRegistry,
      ReadinessWatcher,
      WorkflowExplorer,
      ...workflows,
    ],
  }).compile();
  let failure: Error | null = null;
  try {
    await moduleRef.init();
  } catch (error) {
    failure = error as Error;
  }
  // After a failed init, close() rejects with the init error again.
  await moduleRef.close().catch((error: unknown) => {
    if (error !== failure) throw error;
  });
  return failure;
}

/** A workflow whose class carries `options`, with one plain step. */
function workflowWith(options: unknown): Type<object> {
  @Workflow(options as WorkflowOptions)
  class Configured {
    @Step() only() {}
  }
  return Configured;
}

/** A workflow with one step `s` (after a step `first`) declared with `options`. */
function stepWith(
  options: unknown,
  kind: 'step' | 'resumable' = 'step',
  name?: string,
): Type<object> {
  const decorate = kind === 'step' ? Step : ResumableStep;
  const decorator =
    name === undefined
      ? decorate(options as ResumableStepOptions)
      : decorate(name, options as ResumableStepOptions);
  @Workflow()
  class Stepped {
    @Step() first() {}
    s() {}
  }
  decorator(Stepped.prototype, 's', Object.getOwnPropertyDescriptor(Stepped.prototype, 's')!);
  return Stepped;
}

interface DecoratorCase {
  name: string;
  workflow: () => Type<object>;
  message: RegExp;
}

const c = (name: string, workflow: () => Type<object>, message: RegExp): DecoratorCase => ({
  name,
  workflow,
  message,
});

const WORKFLOW_OPTIONS: DecoratorCase[] = [
  c(
    'options as a string',
    () => workflowWith('Orders'),
    /@Workflow on Configured takes an options object .* but got 'Orders'\. To name the workflow, write @Workflow\(\{ name: \.\.\. \}\)/,
  ),
  c('options null', () => workflowWith(null), /@Workflow on Configured takes an options object/),
  c(
    'options as an array',
    () => workflowWith([]),
    /@Workflow on Configured takes an options object/,
  ),
  c(
    'a misspelt key (nmae)',
    () => workflowWith({ nmae: 'x' }),
    /@Workflow has unknown option\(s\) nmae/,
  ),
  c('name: ""', () => workflowWith({ name: '' }), /@Workflow name must be a non-blank string/),
  c(
    'name: 42',
    () => workflowWith({ name: 42 }),
    /@Workflow name must be a non-blank string, but was 42/,
  ),
  c(
    'name: 256 characters',
    () => workflowWith({ name: 'w'.repeat(256) }),
    /@Workflow name is 256 characters long, over the limit of 255/,
  ),
  c(
    'name with a NUL byte',
    () => workflowWith({ name: 'orders\u0000' }),
    /@Workflow name contains a NUL character/,
  ),
  c(
    'name with a lone surrogate',
    () => workflowWith({ name: 'orders\uD800' }),
    /@Workflow name contains a lone UTF-16 surrogate/,
  ),
  c(
    'hero: the entity class itself',
    () => workflowWith({ hero: 'Order' }),
    /@Workflow hero must be a function returning the hero entity/,
  ),
  c(
    'hero: an entity instance',
    () => workflowWith({ hero: new Order() }),
    /@Workflow hero must be a function/,
  ),
  c(
    'mayProceedWithoutHero: "yes"',
    () => workflowWith({ mayProceedWithoutHero: 'yes' }),
    /mayProceedWithoutHero must be a boolean/,
  ),
  c(
    'stepJobOptions: { piority: 1 }',
    () => workflowWith({ stepJobOptions: { piority: 1 } }),
    /@Workflow stepJobOptions has unknown job option key\(s\): piority/,
  ),
  c(
    'stepJobOptions: { priority: 0 }',
    () => workflowWith({ stepJobOptions: { priority: 0 } }),
    /@Workflow stepJobOptions has invalid job option value\(s\): priority: 0/,
  ),
  c(
    'stepJobOptions: { queue: "a:b" }',
    () => workflowWith({ stepJobOptions: { queue: 'a:b' } }),
    /queue: 'a:b'/,
  ),
  c(
    'stepJobOptions: { waitUntil: a Date in year 10000 }',
    () => workflowWith({ stepJobOptions: { waitUntil: new Date('+010000-01-01T00:00:00Z') } }),
    /@Workflow stepJobOptions has invalid job option value\(s\): waitUntil: Date\(\+010000-01-01T00:00:00\.000Z\) \(outside years 1–9999/,
  ),
  c(
    'stepJobOptions: { wait: "500000 weeks" }',
    () => workflowWith({ stepJobOptions: { wait: '500000 weeks' } }),
    /@Workflow stepJobOptions has invalid job option value\(s\): wait: '500000 weeks' \(would make the step due on \+\d{6}-.*after 9999-12-31T23:59:59\.999Z/,
  ),
  c(
    'stepJobOptions: "fast"',
    () => workflowWith({ stepJobOptions: 'fast' }),
    /@Workflow stepJobOptions must be an object/,
  ),
  c(
    'onException: "pause" (a string at class level)',
    () => workflowWith({ onException: 'pause' }),
    /@Workflow onException holds 'pause'; it takes ExceptionPolicy instances only/,
  ),
  c(
    'onException: [policy, {}]',
    () => workflowWith({ onException: [new ExceptionPolicy('pause'), {}] }),
    /onException holds \{\}/,
  ),
];

const STEP_OPTIONS: DecoratorCase[] = [
  c('options as a number', () => stepWith(42), /step 's': options must be an object, but were 42/),
  c('options null', () => stepWith(null), /step 's': options must be an object, but were null/),
  c(
    'a misspelt key (wiat)',
    () => stepWith({ wiat: '1h' }),
    /step 's': has unknown option\(s\) wiat/,
  ),
  c(
    'a blank name',
    () => stepWith({}, 'step', '  '),
    /step ' {2}': the step name must not be blank/,
  ),
  c(
    'a 256-character name',
    () => stepWith({}, 'step', 's'.repeat(256)),
    /the step name is 256 characters long, over the limit of 255/,
  ),
  c(
    'a name with a NUL byte',
    () => stepWith({}, 'step', 's\u0000'),
    /the step name contains a NUL character/,
  ),
  c(
    'a name with a lone surrogate',
    () => stepWith({}, 'step', 's\uDC00'),
    /the step name contains a lone UTF-16 surrogate/,
  ),
  c('a duplicate name', () => stepWith({}, 'step', 'first'), /step 'first': is already defined/),
  c(
    'repeat producing a name over 255 characters',
    () => stepWith({ repeat: { times: 2 } }, 'step', 'r'.repeat(254)),
    /the step name is 256 characters long/,
  ),
  c(
    'wait: "later"',
    () => stepWith({ wait: 'later' }),
    /has wait: 'later' — wait takes a duration; to wait for a signal, use waitFor/,
  ),
  c(
    'wait: "7200" (a bare number string)',
    () => stepWith({ wait: '7200' }),
    /to wait for a signal, use waitFor/,
  ),
  c(
    'wait: "500000 weeks" (due after 9999-12-31)',
    () => stepWith({ wait: '500000 weeks' }),
    /Workflow Stepped, step 's': has wait '500000 weeks', which would make the step due on \+\d{6}-.*, after 9999-12-31T23:59:59\.999Z: the library stores dates from 0001-01-01 to 9999-12-31 \(UTC\) only\. Use a shorter wait\./,
  ),
  c(
    'wait: 1e20 (ms, beyond a Date)',
    () => stepWith({ wait: 1e20 }),
    /step 's': has wait 100000000000000000000, which would make the step due beyond the range of a JavaScript Date/,
  ),
  c('wait: -1', () => stepWith({ wait: -1 }), /has invalid wait -1/),
  c('wait: NaN', () => stepWith({ wait: NaN }), /has invalid wait/),
  c(
    'wait: a SignalMatcher',
    () => stepWith({ wait: new SignalMatcher('go') }),
    /to wait for a signal, use waitFor/,
  ),
  c(
    'waitFor: "2 days"',
    () => stepWith({ waitFor: '2 days' }),
    /waitFor takes a signal name or matcher; to delay the step, use wait/,
  ),
  c('waitFor: 3600', () => stepWith({ waitFor: 3600 }), /to delay the step, use wait/),
  c('waitFor: ""', () => stepWith({ waitFor: '' }), /has a blank waitFor signal name/),
  c(
    'waitFor: a 256-character name',
    () => stepWith({ waitFor: 'g'.repeat(256) }),
    /waitFor signal name that no signal can carry: it is 256 characters long/,
  ),
  c(
    'waitFor: a name with a NUL byte',
    () => stepWith({ waitFor: 'go\u0000' }),
    /waitFor signal name that no signal can carry: it contains a NUL character/,
  ),
  c(
    'waitFor: a SignalMatcher with a lone surrogate',
    () => stepWith({ waitFor: new SignalMatcher('go\uD800') }),
    /waitFor SignalMatcher whose name no signal can carry/,
  ),
  c(
    'waitFor: { match() } (misspelt)',
    () => stepWith({ waitFor: { match: () => true } }),
    /has invalid waitFor .* must be a signal name, a SignalMatcher, or an object with matches\(signal\)/,
  ),
  c('skipIf: 42', () => stepWith({ skipIf: 42 }), /has invalid skipIf 42/),
  c(
    'skipIf: "noSuchMethod"',
    () => stepWith({ skipIf: 'noSuchMethod' }),
    /has skipIf 'noSuchMethod', but the workflow has no method of that name/,
  ),
  c(
    'onException: "explode"',
    () => stepWith({ onException: 'explode' }),
    /has invalid onException 'explode'/,
  ),
  c('onException: []', () => stepWith({ onException: [] }), /onException is an empty array/),
  c(
    'onException: ["pause"]',
    () => stepWith({ onException: ['pause'] }),
    /invalid onException array element 'pause'/,
  ),
  c(
    'maxReattempts without reattempt',
    () => stepWith({ maxReattempts: 3 }),
    /has maxReattempts but onException is not 'reattempt'/,
  ),
  c(
    'maxReattempts: 0',
    () => stepWith({ onException: 'reattempt', maxReattempts: 0 }),
    /maxReattempts must be a positive integer or null, but was 0/,
  ),
  c(
    'maxReattempts: "3"',
    () => stepWith({ onException: 'reattempt', maxReattempts: '3' }),
    /maxReattempts must be a positive integer or null, but was '3'/,
  ),
  c(
    'terminalAction: "explode"',
    () => stepWith({ onException: 'reattempt', terminalAction: 'explode' }),
    /terminalAction 'explode' is invalid/,
  ),
  c(
    'terminalAction beside an ExceptionPolicy',
    () => stepWith({ onException: new ExceptionPolicy('pause'), terminalAction: 'skip' }),
    /set terminalAction on the ExceptionPolicy instead/,
  ),
  c(
    'beforeStep and afterStep',
    () => stepWith({ beforeStep: 'first', afterStep: 'first' }),
    /cannot specify both beforeStep and afterStep/,
  ),
  c(
    'beforeStep: "nope"',
    () => stepWith({ beforeStep: 'nope' }),
    /references non-existent step 'nope' in beforeStep/,
  ),
  c(
    'afterStep: 42',
    () => stepWith({ afterStep: 42 }),
    /afterStep must be the name of an earlier step, but was 42/,
  ),
  c(
    'jobOptions: { piority: 1 }',
    () => stepWith({ jobOptions: { piority: 1 } }),
    /jobOptions has unknown job option key\(s\): piority/,
  ),
  c(
    'jobOptions: { priority: 1.5 }',
    () => stepWith({ jobOptions: { priority: 1.5 } }),
    /priority: 1.5/,
  ),
  c(
    'jobOptions: { wait: "soon" }',
    () => stepWith({ jobOptions: { wait: 'soon' } }),
    /wait: 'soon'/,
  ),
  c(
    'jobOptions: { waitUntil: "tomorrow" }',
    () => stepWith({ jobOptions: { waitUntil: 'tomorrow' } }),
    /waitUntil: 'tomorrow'/,
  ),
  c(
    'jobOptions: { waitUntil: a Date in year 10000 }',
    () => stepWith({ jobOptions: { waitUntil: new Date('+010000-01-01T00:00:00Z') } }),
    /step 's': jobOptions has invalid job option value\(s\): waitUntil: Date\(\+010000-01-01T00:00:00\.000Z\) \(outside years 1–9999/,
  ),
  c(
    'jobOptions: { waitUntil: a Date in year 0 }',
    () => stepWith({ jobOptions: { waitUntil: new Date('0000-06-01T00:00:00Z') } }),
    /step 's': jobOptions has invalid job option value\(s\): waitUntil: Date\(0000-06-01T00:00:00\.000Z\) \(outside years 1–9999/,
  ),
  c(
    'jobOptions: { wait: "500000 weeks" }',
    () => stepWith({ jobOptions: { wait: '500000 weeks' } }),
    /step 's': jobOptions has invalid job option value\(s\): wait: '500000 weeks' \(would make the step due on \+\d{6}-/,
  ),
  c('repeat: "3"', () => stepWith({ repeat: '3' }), /has invalid repeat '3'/),
  c('repeat: { times: 0 }', () => stepWith({ repeat: { times: 0 } }), /has invalid repeat.times 0/),
  c(
    'repeat: { times: 2, every: "soon" }',
    () => stepWith({ repeat: { times: 2, every: 'soon' } }),
    /has invalid repeat.every 'soon'/,
  ),
  c(
    'repeat: { times: 2, every: "500000 weeks" }',
    () => stepWith({ repeat: { times: 2, every: '500000 weeks' } }),
    /step 's': has repeat\.every '500000 weeks', which would make the step due on \+\d{6}-.*after 9999-12-31T23:59:59\.999Z.*Use a shorter repeat\.every\./,
  ),
  c(
    'repeat: { times: 2, evry: "1m" }',
    () => stepWith({ repeat: { times: 2, evry: '1m' } }),
    /has invalid repeat/,
  ),
  c(
    'maxIterations on a plain @Step',
    () => stepWith({ maxIterations: 5 }),
    /has unknown option\(s\) maxIterations/,
  ),
];

const RESUMABLE_OPTIONS: DecoratorCase[] = [
  c(
    'maxIterations: 0',
    () => stepWith({ maxIterations: 0 }, 'resumable'),
    /has invalid maxIterations 0: must be a positive integer/,
  ),
  c(
    'maxIterations: 1.5',
    () => stepWith({ maxIterations: 1.5 }, 'resumable'),
    /has invalid maxIterations 1.5/,
  ),
  c(
    'maxIterations: "10"',
    () => stepWith({ maxIterations: '10' }, 'resumable'),
    /has invalid maxIterations '10'/,
  ),
  c(
    'maxRuntime: 0',
    () => stepWith({ maxRuntime: 0 }, 'resumable'),
    /has invalid maxRuntime 0: must be a positive duration/,
  ),
  c(
    'maxRuntime: "soon"',
    () => stepWith({ maxRuntime: 'soon' }, 'resumable'),
    /has invalid maxRuntime 'soon'/,
  ),
  c(
    'a misspelt key (maxIteration)',
    () => stepWith({ maxIteration: 5 }, 'resumable'),
    /has unknown option\(s\) maxIteration/,
  ),
];

const PLACEMENT: DecoratorCase[] = [
  c(
    '@Step on a property',
    () => {
      @Workflow()
      class PropertyStep {
        @Step() first() {}
        notAMethod = 1;
      }
      Step()(PropertyStep.prototype, 'notAMethod', {});
      return PropertyStep;
    },
    /decorates 'notAMethod', which is not a method/,
  ),
  c(
    '@Step on a static method',
    () => {
      @Workflow()
      class StaticStep {
        @Step() first() {}
        @Step() static helper() {}
      }
      return StaticStep;
    },
    /StaticStep.helper is a static member decorated with a step or @CancelIf decorator/,
  ),
  c(
    '@CancelIf on a static method',
    () => {
      @Workflow()
      class StaticCancel {
        @Step() first() {}
        @CancelIf() static voided() {
          return false;
        }
      }
      return StaticCancel;
    },
    /StaticCancel.voided is a static member/,
  ),
  c(
    '@CancelIf on a property',
    () => {
      @Workflow()
      class PropertyCancel {
        @Step() first() {}
        voided = false;
      }
      CancelIf()(PropertyCancel.prototype, 'voided', {});
      return PropertyCancel;
    },
    /@CancelIf decorates 'voided', which is not a method/,
  ),
  c(
    '@RemovedStep duplicating a step name',
    () => {
      @Workflow()
      class Gravestone {
        @Step() first() {}
        @RemovedStep('first') legacy?: never;
      }
      return Gravestone;
    },
    /step 'first': is already defined/,
  ),
  c(
    'two workflows under one name',
    () => {
      @Workflow({ name: 'twin' })
      class TwinA {
        @Step() a() {}
      }
      @Workflow({ name: 'twin' })
      class TwinB {
        @Step() b() {}
      }
      return class Both extends TwinA {
        static readonly pair = [TwinA, TwinB];
      };
    },
    /Workflow name 'twin' is registered by both TwinA and TwinB/,
  ),
];

afterAll(() => log.print());

describe('bad decorator options fail boot with StepConfigurationError naming workflow, step and fix', () => {
  const run = async (group: string, { name, workflow, message }: DecoratorCase) => {
    const target = workflow();
    const pair = (target as unknown as { pair?: Array<Type<object>> }).pair;
    const error = await discoveryError(pair ?? [target]);
    log.record(group, name, error ? `${error.name}: ${error.message}` : 'booted');
    expect(error).toBeInstanceOf(StepConfigurationError);
    expect(error!.message).toMatch(message);
  };

  it.each(WORKFLOW_OPTIONS)('@Workflow $name', (row) => run('@Workflow', row));
  it.each(STEP_OPTIONS)('@Step $name', (row) => run('@Step', row));
  it.each(RESUMABLE_OPTIONS)('@ResumableStep $name', (row) => run('@ResumableStep', row));
  it.each(PLACEMENT)('$name', (row) => run('placement', row));
});

describe('new ExceptionPolicy(...) and new SignalMatcher(...) throw StepConfigurationError at construction', () => {
  const CONSTRUCTIONS: Array<[string, () => unknown, RegExp]> = [
    [
      'no arguments',
      () => new (ExceptionPolicy as unknown as new () => ExceptionPolicy)(),
      /expects an action name or an options object with a handler/,
    ],
    [
      'null',
      () => new ExceptionPolicy(null as never),
      /expects an action name or an options object/,
    ],
    [
      'an unknown action',
      () => new ExceptionPolicy('explode' as never),
      /unknown action 'explode'; use one of pause, cancel, reattempt, skip/,
    ],
    [
      'an action with options null',
      () => new ExceptionPolicy('pause', null as never),
      /options must be an object, but were null/,
    ],
    [
      'a misspelt option (maxRetries)',
      () => new ExceptionPolicy('reattempt', { maxRetries: 3 } as never),
      /has unknown option\(s\) maxRetries/,
    ],
    [
      'matching: 42',
      () => new ExceptionPolicy('pause', { matching: 42 as never }),
      /matching takes error classes or predicates/,
    ],
    [
      'matching: [Error, "TypeError"]',
      () => new ExceptionPolicy('pause', { matching: [Error, 'TypeError' as never] }),
      /but got 'TypeError'/,
    ],
    [
      'report: "sometimes"',
      () => new ExceptionPolicy('pause', { report: 'sometimes' as never }),
      /report 'sometimes' is invalid/,
    ],
    [
      'wait on a pause policy',
      () => new ExceptionPolicy('pause', { wait: '1m' }),
      /wait is only allowed with the 'reattempt' action/,
    ],
    [
      'wait: "soon"',
      () => new ExceptionPolicy('reattempt', { wait: 'soon' }),
      /wait 'soon' is neither a duration nor a backoff strategy/,
    ],
    [
      'wait: -5',
      () => new ExceptionPolicy('reattempt', { wait: -5 }),
      /wait -5 is neither a duration/,
    ],
    [
      'wait: "500000 weeks" (due after 9999-12-31)',
      () => new ExceptionPolicy('reattempt', { wait: '500000 weeks' }),
      /^ExceptionPolicy wait '500000 weeks' would make the step due on \+\d{6}-.*, after 9999-12-31T23:59:59\.999Z: the library stores dates from 0001-01-01 to 9999-12-31 \(UTC\) only; use a shorter wait\.$/,
    ],
    [
      'jitter without a strategy',
      () => new ExceptionPolicy('reattempt', { wait: '1m', jitter: 0.1 }),
      /jitter is only allowed with a backoff strategy/,
    ],
    [
      'jitter: 2',
      () => new ExceptionPolicy('reattempt', { wait: 'exponential', jitter: 2 }),
      /jitter must be a number from 0 to 1, but was 2/,
    ],
    [
      'jitter: NaN',
      () => new ExceptionPolicy('reattempt', { wait: 'exponential', jitter: NaN }),
      /jitter must be a number from 0 to 1/,
    ],
    [
      'maxReattempts: 0',
      () => new ExceptionPolicy('reattempt', { maxReattempts: 0 }),
      /maxReattempts must be a positive integer or null, but was 0/,
    ],
    [
      'maxReattempts: Infinity',
      () => new ExceptionPolicy('reattempt', { maxReattempts: Infinity }),
      /maxReattempts must be a positive integer or null/,
    ],
    [
      'terminalAction: "reattempt"',
      () => new ExceptionPolicy('reattempt', { terminalAction: 'reattempt' as never }),
      /terminalAction 'reattempt' is invalid; use one of pause, cancel, skip/,
    ],
    [
      'terminalAction on a skip policy',
      () => new ExceptionPolicy('skip', { terminalAction: 'pause' }),
      /terminalAction is only allowed with the 'reattempt' action/,
    ],
    [
      'a handler that is not a function',
      () => new ExceptionPolicy({ handler: 'pause' as never }),
      /needs either an action .* or a handler function/,
    ],
    [
      'an imperative policy with wait',
      () => new ExceptionPolicy({ handler: () => undefined, wait: '1m' } as never),
      /has unknown option\(s\) wait/,
    ],
    [
      'an array',
      () => new ExceptionPolicy([] as never),
      /needs either an action .* or a handler function/,
    ],
    [
      'SignalMatcher with a blank name',
      () => new SignalMatcher('  '),
      /SignalMatcher needs a non-blank signal name/,
    ],
    [
      'SignalMatcher with a number',
      () => new SignalMatcher(42 as never),
      /SignalMatcher needs a non-blank signal name/,
    ],
    [
      'SignalMatcher with a predicate that is not a function',
      () => new SignalMatcher('go', 'amount > 5' as never),
      /the predicate must be a function/,
    ],
  ];

  it.each(CONSTRUCTIONS)('%s', (name, construct, message) => {
    let thrown: unknown;
    try {
      construct();
    } catch (error) {
      thrown = error;
    }
    log.record(
      'construction',
      name,
      thrown instanceof Error ? `${thrown.name}: ${thrown.message}` : 'constructed',
    );
    expect(thrown).toBeInstanceOf(StepConfigurationError);
    expect((thrown as Error).message).toMatch(message);
  });
});
