import {
  errorColumns,
  exceptionInfo,
  storableText,
  wellFormedText,
} from '../../lib/scheduling/execution-transitions';

/** Node 20 has it; lib ES2022 does not type it. */
const toWellFormed = (text: string): string =>
  (String.prototype as unknown as { toWellFormed(this: string): string }).toWellFormed.call(text);

const HIGH = '\uD83D';
const LOW = '\uDE00';
const PAIR = HIGH + LOW; // 😀

/** Texts with lone surrogates in every position, next to pairs, NUL and plain text. */
const CASES: Array<[string, string, string]> = [
  ['plain text', 'payment declined', 'payment declined'],
  ['a surrogate pair', `ok ${PAIR}`, `ok ${PAIR}`],
  ['a lone high surrogate', `a${HIGH}b`, 'a\uFFFDb'],
  ['a lone low surrogate', `a${LOW}b`, 'a\uFFFDb'],
  ['a lone high surrogate at the end', `end${HIGH}`, 'end\uFFFD'],
  ['a lone low surrogate at the start', `${LOW}start`, '\uFFFDstart'],
  ['two high surrogates, then a low one', `${HIGH}${HIGH}${LOW}`, `\uFFFD${PAIR}`],
  ['a pair, then a lone low surrogate', `${PAIR}${LOW}`, `${PAIR}\uFFFD`],
  ['reversed halves', `${LOW}${HIGH}`, '\uFFFD\uFFFD'],
  ['only lone surrogates', `${HIGH}${HIGH}${LOW}${LOW}`, `\uFFFD${PAIR}\uFFFD`],
];

class LoneSurrogateError extends Error {}

describe('wellFormedText', () => {
  it.each(CASES)(
    'replaces each lone surrogate by U+FFFD, as toWellFormed does (%s)',
    (_name, text, expected) => {
      expect(wellFormedText(text)).toBe(expected);
      expect(wellFormedText(text)).toBe(toWellFormed(text));
    },
  );

  it('keeps NUL (JSON carries it escaped)', () => {
    expect(wellFormedText(`a\u0000${HIGH}`)).toBe('a\u0000\uFFFD');
  });
});

describe('storableText', () => {
  it.each(CASES)('is well-formed (%s)', (_name, text, expected) => {
    expect(storableText(text)).toBe(expected);
  });

  it('replaces NUL and lone surrogates alike, one U+FFFD each', () => {
    expect(storableText(`\u0000x${LOW}\u0000${PAIR}`)).toBe(`\uFFFDx\uFFFD\uFFFD${PAIR}`);
  });
});

describe("a step's error as stored", () => {
  const error = (): Error => {
    const thrown = new LoneSurrogateError(`declined ${HIGH} card\u0000 ${PAIR}`);
    Object.defineProperty(LoneSurrogateError, 'name', {
      value: `Lone${LOW}SurrogateError`,
      configurable: true,
    });
    // A frame of the backtrace with a lone surrogate (a file or function name may carry one).
    thrown.stack = `${thrown.name}: ${thrown.message}\n    at step${HIGH} (/app/w${LOW}.js:1:2)`;
    return thrown;
  };

  afterEach(() => {
    Object.defineProperty(LoneSurrogateError, 'name', {
      value: 'LoneSurrogateError',
      configurable: true,
    });
  });

  it('is well-formed in metadata.exception, NUL kept', () => {
    expect(exceptionInfo(error())).toStrictEqual({
      class: 'Lone\uFFFDSurrogateError',
      message: `declined \uFFFD card\u0000 ${PAIR}`,
      backtrace: ['at step\uFFFD (/app/w\uFFFD.js:1:2)'],
    });
  });

  it('is well-formed and NUL-free in the error columns', () => {
    expect(errorColumns(error())).toStrictEqual({
      errorClassName: 'Lone\uFFFDSurrogateError',
      errorMessage: `declined \uFFFD card\uFFFD ${PAIR}`,
      errorBacktrace: 'at step\uFFFD (/app/w\uFFFD.js:1:2)',
    });
  });

  it('survives JSON and UTF-8 as it was stored', () => {
    const info = exceptionInfo(error());
    const json = JSON.stringify(info);
    // A well-formed string encodes to UTF-8 and back unchanged (a lone surrogate would not).
    expect(Buffer.from(json, 'utf8').toString('utf8')).toBe(json);
    expect(JSON.parse(json)).toStrictEqual(info);
  });
});
