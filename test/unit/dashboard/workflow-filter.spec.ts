import { InvalidArgumentError } from '../../../lib/errors/invalid-argument.error';
import {
  decodePageStart,
  encodePageStart,
  filterPairs,
  parseWorkflowFilter,
} from '../../../lib/dashboard/workflow-filter';

const NOW = Date.parse('2026-03-10T12:00:00Z');

describe('dashboard workflow filter', () => {
  it('turns every field into its search condition', () => {
    const { fields, search } = parseWorkflowFilter(
      {
        state: ['ready', 'paused', 'ready'],
        class: ' OrderWorkflow ',
        heroType: 'Order',
        heroId: '42',
        step: 'capture',
        waitingLongerThan: '15m',
        createdFrom: '2026-03-01',
        createdTo: '2026-03-09',
        q: 'abc',
      },
      NOW,
    );
    expect(search).toEqual({
      states: ['ready', 'paused'],
      types: ['OrderWorkflow'],
      heroType: 'Order',
      heroId: '42',
      stepName: 'capture',
      waitingSinceBefore: new Date(NOW - 15 * 60_000),
      createdFrom: new Date('2026-03-01T00:00:00Z'),
      createdBefore: new Date('2026-03-10T00:00:00Z'),
      text: 'abc',
    });
    expect(fields.class).toBe('OrderWorkflow');
    expect(filterPairs(fields)).toContainEqual(['state', 'paused']);
  });

  it('treats blank fields as no filter', () => {
    expect(parseWorkflowFilter({ state: '', class: '  ', q: '' })).toEqual({
      fields: {},
      search: {},
    });
  });

  it('keeps a createdTo with a time as given', () => {
    const { search } = parseWorkflowFilter({ createdTo: '2026-03-09T08:00:00Z' });
    expect(search.createdBefore).toEqual(new Date('2026-03-09T08:00:00Z'));
  });

  it.each([
    [{ state: 'sleeping' }, /state must be one of ready, performing, paused, finished, canceled/],
    [{ waitingLongerThan: 'soon' }, /waitingLongerThan must be a duration/],
    [{ createdFrom: 'yesterday' }, /createdFrom must be a date/],
    [
      { createdFrom: '2026-03-05', createdTo: '2026-03-01' },
      /createdFrom must be before createdTo/,
    ],
    [{ heroId: { $ne: 1 } }, /heroId must be text/],
    [{ q: 'x'.repeat(501) }, /longer than 500/],
  ])('refuses %p with a message naming the field', (input, message) => {
    expect(() => parseWorkflowFilter(input)).toThrow(InvalidArgumentError);
    expect(() => parseWorkflowFilter(input)).toThrow(message);
  });

  it('round-trips the page start and refuses one it did not write', () => {
    const start = { createdAt: new Date('2026-03-01T10:00:00.123Z'), id: 'a-b' };
    expect(decodePageStart(encodePageStart(start))).toEqual(start);
    expect(decodePageStart(undefined)).toBeUndefined();
    expect(() => decodePageStart('bm9wZQ')).toThrow(/not one this dashboard wrote/);
  });
});
