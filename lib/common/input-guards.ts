/**
 * Checks of caller-supplied values before anything is written: strings bound for a text column
 * (names, keys, hero ids), dates bound for a timestamp column, and values bound for a JSON column
 * (signal payloads, workflow metadata, step metadata, resumable cursors). Each check returns the
 * problem as a phrase, or null, so every caller raises its own error class with its own context
 * ("signal() name …", "start() metadata.customer …").
 */

/**
 * The longest name, key or hero id the library stores: MariaDB/MySQL columns are
 * `varchar(255)` (characters, i.e. code points), and PostgreSQL and SQLite enforce the same limit
 * so that an app behaves the same on every database.
 */
export const MAX_STORED_STRING_LENGTH = 255;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Inside JSON a NUL is fine (stored as \u0000 and read back), but a lone surrogate is not. */
const LONE_SURROGATE_IN_JSON =
  'contains a lone UTF-16 surrogate, which is not valid Unicode (MariaDB/MySQL refuse it in JSON; PostgreSQL jsonb too)';

/** How many characters (code points) a string has, as a database column counts them. */
export function characterCount(value: string): number {
  let count = 0;
  for (let index = 0; index < value.length; index++) {
    const code = value.charCodeAt(index);
    // A high surrogate followed by a low one is one character.
    if (code >= 0xd800 && code <= 0xdbff && index + 1 < value.length) {
      const next = value.charCodeAt(index + 1);
      if (next >= 0xdc00 && next <= 0xdfff) index += 1;
    }
    count += 1;
  }
  return count;
}

export interface StoredStringRules {
  /** default 255 ({@link MAX_STORED_STRING_LENGTH}) */
  maxLength?: number;
  /** default false: blank (empty or whitespace-only) strings are refused */
  allowBlank?: boolean;
}

/**
 * Why `value` cannot be stored verbatim in a text column, or null. A NUL character is refused
 * by PostgreSQL text columns; a lone UTF-16 surrogate is not valid Unicode and the driver would
 * silently store U+FFFD instead; over `maxLength` characters MariaDB/MySQL would refuse it.
 */
export function storedStringProblem(value: unknown, rules: StoredStringRules = {}): string | null {
  const maxLength = rules.maxLength ?? MAX_STORED_STRING_LENGTH;
  if (typeof value !== 'string') return `must be a string, but was ${describeValue(value)}`;
  if (!rules.allowBlank && value.trim() === '')
    return `must not be blank, but was ${describeValue(value)}`;
  if (value.includes('\u0000')) {
    return `contains a NUL character (\\u0000), which the database cannot store in a text column: ${describeValue(value)}`;
  }
  if (LONE_SURROGATE.test(value)) {
    return `contains a lone UTF-16 surrogate (not valid Unicode; the database would store U+FFFD instead): ${describeValue(value)}`;
  }
  const length = characterCount(value);
  if (length > maxLength) {
    return `is ${length} characters long, over the limit of ${maxLength}: ${describeValue(value)}`;
  }
  return null;
}

/**
 * The earliest instant the library stores, 0001-01-01T00:00:00.000Z, and the latest,
 * 9999-12-31T23:59:59.999Z (SPEC §16.1: years 1–9999). That is the range of four-digit ISO 8601
 * years, in which a Date prints and parses the same everywhere (after 9999 it prints as
 * `+010000-…`), and MariaDB/MySQL `DATETIME` ends at 9999-12-31; the same range on every
 * database keeps an app's behavior the same everywhere.
 */
export const MIN_STORED_TIME = Date.parse('0001-01-01T00:00:00.000Z');
export const MAX_STORED_TIME = Date.parse('9999-12-31T23:59:59.999Z');

/** What the range check says to do instead. */
const STORED_DATE_RANGE = 'the library stores dates from 0001-01-01 to 9999-12-31 (UTC) only';

/**
 * Why `value` cannot be stored as a date, or null: it must be a valid `Date` within years
 * 1–9999 ({@link MIN_STORED_TIME}..{@link MAX_STORED_TIME}). The phrase follows the value's
 * name: "payload.at is an Invalid Date".
 */
export function storedDateProblem(value: unknown): string | null {
  if (!(value instanceof Date)) return `must be a Date, but was ${describeValue(value)}`;
  const time = value.getTime();
  if (Number.isNaN(time)) return 'is an Invalid Date';
  if (time < MIN_STORED_TIME || time > MAX_STORED_TIME) {
    return `is ${describeValue(value)}, outside years 1–9999: ${STORED_DATE_RANGE}`;
  }
  return null;
}

/**
 * Why a time `waitMs` from `now` cannot be the due time of a step, or null: it must not pass
 * {@link MAX_STORED_TIME} (nor the range of a JavaScript Date).
 */
export function dueTimeProblem(waitMs: number, now: number = Date.now()): string | null {
  const due = now + waitMs;
  if (Number.isFinite(due) && due <= MAX_STORED_TIME) return null;
  const when = Number.isNaN(new Date(due).getTime())
    ? 'beyond the range of a JavaScript Date'
    : `on ${new Date(due).toISOString()}`;
  return `would make the step due ${when}, after 9999-12-31T23:59:59.999Z: ${STORED_DATE_RANGE}`;
}

/** Objects JSON.stringify turns into `{}` (or worse) without a word: refused by name. */
const OPAQUE_OBJECTS: Array<[string, abstract new (...args: never[]) => object]> = [
  ['Map', Map],
  ['Set', Set],
  ['WeakMap', WeakMap],
  ['WeakSet', WeakSet],
  ['Promise', Promise],
  ['RegExp', RegExp],
  ['ArrayBuffer', ArrayBuffer],
  ['Error', Error],
  ['WeakRef', WeakRef],
  ['SharedArrayBuffer', SharedArrayBuffer],
];

export interface JsonDataRules {
  /**
   * Cursors store a `Date` tagged as `{ "$date": iso }`, so an object whose only key is `$date`
   * would come back as a Date: refused when set (default false).
   */
  reserveDateTag?: boolean;
}

/**
 * Why `value` (named `path` in the message, e.g. `payload`) does not round-trip through a JSON
 * column, or null. JSON data is null, booleans, finite numbers, strings, arrays and objects of
 * JSON data (strings may hold NUL, which JSON escapes, but not a lone UTF-16 surrogate, which
 * is not Unicode); a `Date` within years 1–9999 (stored as its ISO string, or tagged in cursors),
 * boxed primitives (`new String('x')`, stored as the primitive), class instances (their own
 * enumerable fields are stored, as JSON.stringify does) and any object with `toJSON()` are taken
 * as JSON.stringify takes them. An object property holding `undefined` is left out, as
 * JSON.stringify does. Refused, because JSON.stringify would throw or silently store something
 * else: BigInt, functions, symbols, NaN and ±Infinity (stored as null), `undefined` array
 * elements (stored as null), invalid Dates and Dates outside years 1–9999,
 * Map/Set/RegExp/Error/Promise/WeakRef/typed arrays (stored as `{}` or worse), class instances
 * without a single own enumerable field (stored as `{}`: an Intl formatter, a URLSearchParams, an
 * object of getters), circular references, and nesting too deep to serialize.
 */
export function jsonDataProblem(
  value: unknown,
  path: string,
  rules: JsonDataRules = {},
): string | null {
  try {
    return jsonProblemAt(value, { parent: null, segment: path }, new Map(), rules);
  } catch (error) {
    if (error instanceof RangeError) return `${path} is nested too deeply to serialize as JSON`;
    throw error;
  }
}

/** A path into the value, rendered only when there is a problem (deep values stay linear). */
interface PathNode {
  parent: PathNode | null;
  segment: string;
}

function render(node: PathNode): string {
  const segments: string[] = [];
  for (let at: PathNode | null = node; at; at = at.parent) segments.push(at.segment);
  return segments.reverse().join('');
}

/** `ancestors` maps each object on the current path to its path (cycle detection in O(1)). */
function jsonProblemAt(
  value: unknown,
  path: PathNode,
  ancestors: Map<object, PathNode>,
  rules: JsonDataRules,
): string | null {
  switch (typeof value) {
    case 'string':
      return LONE_SURROGATE.test(value) ? `${render(path)} ${LONE_SURROGATE_IN_JSON}` : null;
    case 'boolean':
      return null;
    case 'number':
      return Number.isFinite(value)
        ? null
        : `${render(path)} is ${String(value)}, which JSON cannot represent (it would be stored as null)`;
    case 'bigint':
      return `${render(path)} is a BigInt (${String(value)}n), which JSON cannot represent; convert it to a string or a number`;
    case 'function':
      return `${render(path)} is a function, which JSON cannot represent (it would be silently dropped)`;
    case 'symbol':
      return `${render(path)} is a symbol, which JSON cannot represent (it would be silently dropped)`;
    case 'undefined':
      return `${render(path)} is undefined, which JSON cannot represent; use null`;
  }
  if (value === null) return null;
  const object = value as object;
  if (object instanceof Date) {
    const problem = storedDateProblem(object);
    return problem ? `${render(path)} ${problem}` : null;
  }
  if (object instanceof Number || object instanceof String || object instanceof Boolean) {
    // JSON.stringify stores the primitive inside (so new Number(NaN) becomes null).
    return jsonProblemAt(object.valueOf(), path, ancestors, rules);
  }
  if (object instanceof BigInt || object instanceof Symbol) {
    // Object(1n) makes JSON.stringify throw; Object(Symbol()) is stored as {}.
    return jsonProblemAt(object.valueOf(), path, ancestors, rules);
  }
  const opaque = OPAQUE_OBJECTS.find(([, type]) => object instanceof type);
  if (opaque) {
    return `${render(path)} is ${withArticle(opaque[0])}, which JSON cannot represent (it would be stored as {}); convert it to plain data`;
  }
  if (ArrayBuffer.isView(object)) {
    return `${render(path)} is ${withArticle(object.constructor.name)}, which JSON cannot represent faithfully; convert it to an array or a string`;
  }
  const cycle = ancestors.get(object);
  if (cycle !== undefined) {
    return `${render(path)} is a circular reference to ${render(cycle)}, which JSON cannot represent`;
  }
  ancestors.set(object, path);
  try {
    return jsonObjectProblem(object, path, ancestors, rules);
  } finally {
    ancestors.delete(object);
  }
}

function jsonObjectProblem(
  object: object,
  path: PathNode,
  ancestors: Map<object, PathNode>,
  rules: JsonDataRules,
): string | null {
  const toJSON = (object as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === 'function') {
    const converted: unknown = (toJSON as (key: string) => unknown).call(object, '');
    return converted === object ? null : jsonProblemAt(converted, path, ancestors, rules);
  }
  if (Array.isArray(object)) {
    for (let index = 0; index < object.length; index++) {
      const element: unknown = object[index];
      const elementPath = { parent: path, segment: `[${index}]` };
      if (element === undefined) {
        return `${render(elementPath)} is undefined, which JSON stores as null in an array; use null`;
      }
      const problem = jsonProblemAt(element, elementPath, ancestors, rules);
      if (problem) return problem;
    }
    return null;
  }
  const entries = Object.entries(object);
  if (entries.length === 0 && !isPlainObject(object)) {
    return `${render(path)} is ${describeValue(object)} without a single own enumerable field, which JSON would store as {}; convert it to plain data`;
  }
  if (rules.reserveDateTag && entries.length === 1 && entries[0][0] === '$date') {
    return `${render(path)} is an object whose only key is "$date", which is reserved: cursors store Dates that way, so it would come back as a Date`;
  }
  for (const [key, property] of entries) {
    if (property === undefined) continue;
    if (LONE_SURROGATE.test(key)) {
      return `${render(path)} has a key ${describeValue(key)} that ${LONE_SURROGATE_IN_JSON}`;
    }
    const problem = jsonProblemAt(
      property,
      { parent: path, segment: keyPath(key) },
      ancestors,
      rules,
    );
    if (problem) return problem;
  }
  return null;
}

/** "a Map", "an Error", "a Uint8Array". */
function withArticle(noun: string): string {
  return `${/^[AEIO]/i.test(noun) ? 'an' : 'a'} ${noun}`;
}

function keyPath(key: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}

/** True for `{}`-style objects (prototype Object.prototype or null). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * A short rendering of a caller's value for an error message: strings quoted with control
 * characters and lone surrogates escaped, long strings cut, other values by type.
 */
export function describeValue(value: unknown, maxLength = 60): string {
  if (typeof value === 'string') {
    const cut = value.length > maxLength ? `${value.slice(0, maxLength)}…` : value;
    // JSON.stringify escapes control characters and lone surrogates (well-formed stringify).
    const escaped = JSON.stringify(cut).slice(1, -1).replace(/\\"/g, '"');
    return `'${escaped}'${value.length > maxLength ? ` (${value.length} UTF-16 units)` : ''}`;
  }
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  if (typeof value === 'bigint') return `${String(value)}n`;
  if (typeof value === 'symbol') return value.toString();
  if (typeof value === 'function') return `function ${value.name || '(anonymous)'}`;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return `an array (length ${value.length})`;
  if (value instanceof Date)
    return Number.isNaN(value.getTime()) ? 'Invalid Date' : `Date(${value.toISOString()})`;
  const name = (value as { constructor?: { name?: string } }).constructor?.name;
  return name && name !== 'Object' ? `${withArticle(name)} instance` : 'an object';
}
