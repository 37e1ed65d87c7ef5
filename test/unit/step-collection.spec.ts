import { StepCollection } from '../../lib/discovery/step-collection';
import type { StepDefinition } from '../../lib/discovery/step-definition.interface';

function step(
  name: string,
  position: { beforeStep?: string; afterStep?: string } = {},
  kind: StepDefinition['kind'] = 'step',
): StepDefinition {
  return {
    name,
    kind,
    methodName: kind === 'removed' ? null : name,
    waitMs: null,
    waitFor: null,
    timeoutMs: null,
    onTimeout: null,
    skipIf: null,
    policies: null,
    beforeStep: position.beforeStep ?? null,
    afterStep: position.afterStep ?? null,
    jobOptions: {},
    maxIterations: null,
    maxRuntimeMs: null,
  };
}

const removed = (name: string): StepDefinition => step(name, {}, 'removed');
const order = (collection: StepCollection): string[] => collection.ordered.map((s) => s.name);

describe('StepCollection', () => {
  describe('ordering', () => {
    it('keeps unpositioned steps in declaration order', () => {
      expect(order(new StepCollection([step('a'), step('b'), step('c')]))).toEqual(['a', 'b', 'c']);
    });

    it('inserts a beforeStep step right before its target', () => {
      const steps = [step('a'), step('b'), step('c'), step('x', { beforeStep: 'b' })];
      expect(order(new StepCollection(steps))).toEqual(['a', 'x', 'b', 'c']);
    });

    it('inserts an afterStep step right after its target', () => {
      const steps = [step('a'), step('b'), step('c'), step('x', { afterStep: 'a' })];
      expect(order(new StepCollection(steps))).toEqual(['a', 'x', 'b', 'c']);
    });

    it('places before the first step and after the last step', () => {
      const steps = [
        step('a'),
        step('b'),
        step('first', { beforeStep: 'a' }),
        step('last', { afterStep: 'b' }),
      ];
      expect(order(new StepCollection(steps))).toEqual(['first', 'a', 'b', 'last']);
    });

    it('inserts positioned steps in declaration order, each next to its target as it stands then', () => {
      // x goes after a; then y goes after a too, so y lands between a and x.
      const steps = [
        step('a'),
        step('b'),
        step('x', { afterStep: 'a' }),
        step('y', { afterStep: 'a' }),
      ];
      expect(order(new StepCollection(steps))).toEqual(['a', 'y', 'x', 'b']);
      // Two beforeStep on the same target keep their declaration order.
      const before = [
        step('a'),
        step('b'),
        step('x', { beforeStep: 'b' }),
        step('y', { beforeStep: 'b' }),
      ];
      expect(order(new StepCollection(before))).toEqual(['a', 'x', 'y', 'b']);
    });

    it('follows a positioned step positioned against another positioned step', () => {
      const steps = [
        step('a'),
        step('b'),
        step('x', { afterStep: 'a' }),
        step('y', { afterStep: 'x' }),
      ];
      expect(order(new StepCollection(steps))).toEqual(['a', 'x', 'y', 'b']);
    });

    it('keeps removed steps in place and lets steps be positioned against them', () => {
      const steps = [step('a'), removed('gone'), step('b'), step('x', { beforeStep: 'gone' })];
      expect(order(new StepCollection(steps))).toEqual(['a', 'x', 'gone', 'b']);
    });

    it('does not mutate the definitions it is given', () => {
      const steps = [step('a'), step('b'), step('x', { beforeStep: 'a' })];
      const copy = [...steps];
      new StepCollection(steps);
      expect(steps).toEqual(copy);
    });
  });

  describe('runnable and removed', () => {
    const collection = new StepCollection([
      step('a'),
      removed('old1'),
      step('b'),
      removed('old2'),
      step('x', { afterStep: 'old2' }),
    ]);

    it('runnable leaves gravestones out, in run order', () => {
      expect(collection.runnable.map((s) => s.name)).toEqual(['a', 'b', 'x']);
    });

    it('removed lists only gravestones, in run order', () => {
      expect(collection.removed.map((s) => s.name)).toEqual(['old1', 'old2']);
    });

    it('named() finds runnable and removed steps, and nothing else', () => {
      expect(collection.named('b')?.kind).toBe('step');
      expect(collection.named('old1')?.kind).toBe('removed');
      expect(collection.named('nope')).toBeUndefined();
    });
  });

  describe('nextAfter', () => {
    const collection = new StepCollection([
      removed('zero'),
      step('a'),
      removed('gone'),
      step('b'),
      step('x', { beforeStep: 'a' }),
      removed('tail'),
    ]);
    // order: zero, x, a, gone, b, tail

    it('null gives the first runnable step, skipping a leading gravestone', () => {
      expect(order(collection)).toEqual(['zero', 'x', 'a', 'gone', 'b', 'tail']);
      expect(collection.nextAfter(null)?.name).toBe('x');
    });

    it('gives the next step in run order, not declaration order', () => {
      expect(collection.nextAfter('x')?.name).toBe('a');
    });

    it('skips gravestones', () => {
      expect(collection.nextAfter('a')?.name).toBe('b');
    });

    it('works from a removed step (an execution that landed on a gravestone continues)', () => {
      expect(collection.nextAfter('gone')?.name).toBe('b');
      expect(collection.nextAfter('zero')?.name).toBe('x');
    });

    it('is null at the end, also when only gravestones follow', () => {
      expect(collection.nextAfter('b')).toBeNull();
      expect(collection.nextAfter('tail')).toBeNull();
    });

    it('is null for an unknown name', () => {
      expect(collection.nextAfter('nope')).toBeNull();
    });

    it('is null for null when nothing is runnable', () => {
      expect(new StepCollection([removed('only')]).nextAfter(null)).toBeNull();
      expect(new StepCollection([]).nextAfter(null)).toBeNull();
    });
  });

  describe('previousBefore', () => {
    const collection = new StepCollection([
      removed('zero'),
      step('a'),
      removed('gone'),
      step('b'),
      step('x', { afterStep: 'b' }),
    ]);
    // order: zero, a, gone, b, x

    it('gives the previous runnable step in run order', () => {
      expect(collection.previousBefore('x')?.name).toBe('b');
    });

    it('skips gravestones', () => {
      expect(collection.previousBefore('b')?.name).toBe('a');
    });

    it('is null for the first runnable step even behind a gravestone', () => {
      expect(collection.previousBefore('a')).toBeNull();
    });

    it('is null for the very first entry and for an unknown name', () => {
      expect(collection.previousBefore('zero')).toBeNull();
      expect(collection.previousBefore('nope')).toBeNull();
    });
  });
});
