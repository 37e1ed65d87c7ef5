import { matcherReadsContext } from '../../lib/api/signal-matcher';
import { SignalEntity, SignalMatcher, StepConfigurationError, WorkflowEntity } from '../../lib';
import type { WorkflowContext } from '../../lib';

function signal(name: string, payload: unknown = null): SignalEntity {
  return Object.assign(new SignalEntity(), { name, payload });
}

interface Order {
  id: number;
  totalCents: number;
}

describe('SignalMatcher', () => {
  it.each(['', '   ', '\t'])('refuses the blank name %p with StepConfigurationError', (name) => {
    expect(() => new SignalMatcher(name)).toThrow(StepConfigurationError);
    expect(() => new SignalMatcher(name)).toThrow(/non-blank signal name/);
  });

  it('refuses a name that is not a string', () => {
    const Ctor = SignalMatcher as unknown as new (name: unknown) => SignalMatcher;
    expect(() => new Ctor(undefined)).toThrow(StepConfigurationError);
    expect(() => new Ctor(42)).toThrow(StepConfigurationError);
  });

  it('refuses a predicate that is not a function, naming the signal', () => {
    const Ctor = SignalMatcher as unknown as new (name: string, p: unknown) => SignalMatcher;
    expect(() => new Ctor('paid', 'amount > 0')).toThrow(StepConfigurationError);
    expect(() => new Ctor('paid', 'amount > 0')).toThrow(/SignalMatcher 'paid'.*predicate/);
  });

  it('exposes its name', () => {
    expect(new SignalMatcher('payment_confirmed').name).toBe('payment_confirmed');
  });

  it('without a predicate matches exactly the signals of its name', () => {
    const matcher = new SignalMatcher('payment_confirmed');
    expect(matcher.matches(signal('payment_confirmed'))).toBe(true);
    expect(matcher.matches(signal('payment_refused'))).toBe(false);
    expect(matcher.matches(signal('Payment_Confirmed'))).toBe(false);
  });

  it('with a predicate matches by name and predicate, giving it the payload and the ctx', () => {
    const workflow = new WorkflowEntity();
    const hero: Order = { id: 7, totalCents: 1200 };
    const ctx: WorkflowContext<Order> = { workflow, hero };
    const predicate = jest.fn(
      (payload: { amountCents: number }, c: WorkflowContext<Order>) =>
        payload.amountCents >= c.hero.totalCents,
    );
    const matcher = new SignalMatcher<{ amountCents: number }, Order>('paid', predicate);

    expect(matcher.matches(signal('paid', { amountCents: 1200 }), ctx)).toBe(true);
    expect(predicate).toHaveBeenLastCalledWith({ amountCents: 1200 }, ctx);
    expect(matcher.matches(signal('paid', { amountCents: 100 }), ctx)).toBe(false);
  });

  it('does not call the predicate for a signal of another name', () => {
    const predicate = jest.fn(() => true);
    const matcher = new SignalMatcher('paid', predicate);
    expect(matcher.matches(signal('refunded', {}))).toBe(false);
    expect(predicate).not.toHaveBeenCalled();
  });

  it('coerces the predicate result to a boolean', () => {
    const matcher = new SignalMatcher(
      'paid',
      (payload: { ok?: string }) => payload.ok as unknown as boolean,
    );
    expect(matcher.matches(signal('paid', { ok: 'yes' }))).toBe(true);
    expect(matcher.matches(signal('paid', {}))).toBe(false);
  });

  it('lets a throwing predicate propagate (a throwing matcher aborts delivery, SPEC §8)', () => {
    const matcher = new SignalMatcher('paid', () => {
      throw new Error('matcher broke');
    });
    expect(() => matcher.matches(signal('paid', {}))).toThrow('matcher broke');
  });

  it('is reusable: the same instance matches many signals independently', () => {
    const matcher = new SignalMatcher('tick', (payload: { n: number }) => payload.n % 2 === 0);
    expect([1, 2, 3, 4].map((n) => matcher.matches(signal('tick', { n })))).toEqual([
      false,
      true,
      false,
      true,
    ]);
  });

  it('tells a delivery whether matching reads the context (so the hero is loaded only then)', () => {
    expect(matcherReadsContext(new SignalMatcher('paid'))).toBe(false);
    expect(matcherReadsContext(new SignalMatcher('paid', () => true))).toBe(true);
    expect(matcherReadsContext({ matches: () => true })).toBe(true);
  });
});
