import { parseAppReference } from '../../../lib/cli/app-reference';
import { CliUsageError } from '../../../lib/cli/cli-usage.error';
import {
  DEFAULT_LIST_LIMIT,
  expectArguments,
  parseListOptions,
  parsePayload,
} from '../../../lib/cli/command-arguments';
import { splitGlobalOptions } from '../../../lib/cli/global-options';

function usageErrorOf(run: () => unknown): CliUsageError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(CliUsageError);
    return error as CliUsageError;
  }
  throw new Error('expected a CliUsageError');
}

describe('geneva-drive arguments', () => {
  describe('splitGlobalOptions', () => {
    it('takes --app and --json off the line, before or after the command', () => {
      expect(
        splitGlobalOptions(['--app', 'dist/app.js#AppModule', 'list', '--json', '--limit', '5']),
      ).toEqual({
        app: 'dist/app.js#AppModule',
        json: true,
        args: ['list', '--limit', '5'],
      });
      expect(splitGlobalOptions(['show', 'x', '--app=a.js#M'])).toEqual({
        app: 'a.js#M',
        json: false,
        args: ['show', 'x'],
      });
    });

    it('leaves everything after -- to the command', () => {
      expect(splitGlobalOptions(['signal', '--', '--json'])).toEqual({
        app: null,
        json: false,
        args: ['signal', '--', '--json'],
      });
    });

    it('refuses --app without a value, or twice', () => {
      expect(usageErrorOf(() => splitGlobalOptions(['list', '--app'])).message).toMatch(
        /^--app needs a value: --app <file>#<export>/,
      );
      expect(usageErrorOf(() => splitGlobalOptions(['--app', '--json'])).message).toMatch(
        /needs a value/,
      );
      expect(usageErrorOf(() => splitGlobalOptions(['--app=a#A', '--app', 'b#B'])).message).toBe(
        '--app is given twice: pass it once.',
      );
    });
  });

  describe('parseAppReference', () => {
    it('splits at the last #', () => {
      expect(parseAppReference('dist/app.module.js#AppModule')).toEqual({
        file: 'dist/app.module.js',
        exportName: 'AppModule',
      });
      expect(parseAppReference('odd#dir/app.js#App_1')).toEqual({
        file: 'odd#dir/app.js',
        exportName: 'App_1',
      });
    });

    it.each(['dist/app.module.js', 'dist/app.module.js#', '#AppModule', 'a.js#not-a-name'])(
      'refuses %s, naming the form',
      (text) => {
        expect(usageErrorOf(() => parseAppReference(text)).message).toBe(
          `--app '${text}' is not <file>#<export>: name the compiled file and the module class it exports, e.g. --app dist/app.module.js#AppModule.`,
        );
      },
    );
  });

  describe('parseListOptions', () => {
    it('defaults the limit and passes the filters as a repository query', () => {
      expect(parseListOptions({})).toEqual({ limit: DEFAULT_LIST_LIMIT });
      expect(
        parseListOptions({
          state: 'ready, paused,ready',
          class: 'OrderWorkflow',
          heroType: 'Order',
          heroId: '42',
          limit: '7',
        }),
      ).toEqual({
        states: ['ready', 'paused'],
        type: 'OrderWorkflow',
        hero: { heroType: 'Order', heroId: '42' },
        limit: 7,
      });
    });

    it('refuses an unknown state, naming the states', () => {
      expect(usageErrorOf(() => parseListOptions({ state: 'ready,done' })).message).toBe(
        "--state 'ready,done' names no workflow state ('done'): use ready, performing, paused, finished, canceled, several comma-separated.",
      );
    });

    it.each(['0', '1001', '2.5', 'ten', '-1'])('refuses --limit %s', (limit) => {
      expect(usageErrorOf(() => parseListOptions({ limit })).message).toBe(
        `--limit '${limit}' is not a whole number from 1 to 1000.`,
      );
    });

    it('wants --hero-type and --hero-id together', () => {
      for (const options of [{ heroType: 'Order' }, { heroId: '1' }]) {
        expect(usageErrorOf(() => parseListOptions(options)).message).toMatch(
          /^--hero-type and --hero-id go together/,
        );
      }
    });
  });

  it('parsePayload parses JSON and names the fix for text that is not', () => {
    expect(parsePayload('{"amount": 100}')).toEqual({ amount: 100 });
    expect(parsePayload(undefined)).toBeUndefined();
    expect(usageErrorOf(() => parsePayload('{amount')).message).toMatch(
      /^--payload is not JSON \(.+\): quote it for your shell/,
    );
  });

  it('expectArguments refuses extra positional arguments', () => {
    expect(() => expectArguments(['a'], 'a workflow id', 1)).not.toThrow();
    expect(usageErrorOf(() => expectArguments(['a', 'b'], 'a workflow id', 1)).message).toBe(
      "expected a workflow id, but got 'a' 'b'.",
    );
  });
});
