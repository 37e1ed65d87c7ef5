import { StateLiterals, stateLiterals } from '../../../lib/adapters/postgres/library-table';

describe('StateLiterals', () => {
  it('writes lower-case state names as a quoted list', () => {
    expect(stateLiterals('scheduled', 'waiting').listSql).toBe("'scheduled', 'waiting'");
  });

  it.each([["pending' OR '1'='1"], ['Waiting'], ['in progress'], ['']])(
    'refuses %j: only lower-case names and underscores ever reach the text',
    (state) => {
      expect(() => new StateLiterals([state])).toThrow(
        'StateLiterals takes lower-case state names',
      );
    },
  );

  it('refuses an empty list (`IN ()` is not SQL)', () => {
    expect(() => new StateLiterals([])).toThrow('StateLiterals takes lower-case state names');
  });
});
