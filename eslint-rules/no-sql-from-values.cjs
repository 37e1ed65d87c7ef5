'use strict';

/**
 * `geneva-drive/no-sql-from-values`: no value is ever rendered into SQL text (SPEC §16.1).
 *
 * A template literal or `+` concatenation whose static text has the shape of SQL may only
 * interpolate what cannot carry a value:
 *   - quoteIdentifier(…) / quoteTable(…), the one identifier-quoting function;
 *   - placeholder builders: placeholder(…), …Placeholder(…), …Placeholders(…);
 *   - a number right after `$` (`$${index + 1}`, `$${params.push(value)}`; with type information
 *     it must be typed `number`);
 *   - UPPER_SNAKE_CASE constants (and members or `.join('…')` of them);
 *   - names ending in Sql/Fragment/Clause/Columns/Table (plural too), or `quoted…`: already-built SQL
 *     or names that went through quoteIdentifier;
 *   - literals, and `const` locals or local helper functions built only from the above;
 *   - conditionals, `??`/`||`, `+`, nested templates, `.join('…')` and `.map(fn)` over the above.
 * "The shape of SQL" is scored from clause shapes, each a keyword with its operand (SHAPES):
 * `SELECT x FROM`, `UPDATE t SET a =`, `WHERE a =`, `JOIN t ON a =`, DDL, a value in quotes
 * (`= '${…}'`) count 2; `FROM t WHERE`, `ORDER BY a`, `LIMIT ${…}`, `AND a = $1`, `VALUES ($1`,
 * `IN (${…}` and being the argument of `qb.where()`/`query()` count 1; 2 points make SQL. Error
 * messages and log lines (`new …Error(…)`, `logger.warn(…)`) are text for people and not checked.
 * Also reported anywhere: value escaping (`escapeLiteral`, mysql's `escape`/`format`), identifier
 * escaping outside quoteIdentifier/quoteTable (`escapeIdentifier`, `escapeId`, `x.escape()`), and
 * SQL-level `PREPARE`/`EXECUTE` text.
 * Not seen: SQL assembled with `+=` across statements, or with `[…].join()` of bare values.
 */

const QUOTING_FUNCTIONS = new Set(['quoteIdentifier', 'quoteTable']);
const PLACEHOLDER_CALL = /^(?:placeholders?|\w*Placeholders?)$/;
// Already-built SQL, or identifiers already quoted by quoteIdentifier (`quoted`, `quotedTable`).
const FRAGMENT_NAME =
  /^(?:sql|fragments?|clauses?|columns|tables?|quoted(?:[A-Z]\w*)?)$|(?:Sql|SQL|Fragments?|Clauses?|Columns|Tables?)$/;
const UPPER_SNAKE = /^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*$/;
const LITERAL_ESCAPERS = new Set(['escapeLiteral']);
const IDENTIFIER_ESCAPERS = new Set(['escapeIdentifier', 'escapeId']);
// `driver.escape(…)`, `connection.escape(…)`: as a method only (a bare `escape()` may escape a RegExp).
const ESCAPE_METHODS = new Set(['escape']);
const ESCAPING_MODULES = /^(?:mysql2?(?:\/promise)?|sqlstring|pg-format|pg-escape)$/;
const ESCAPING_EXPORTS = new Set([
  'escape',
  'escapeId',
  'format',
  'raw',
  'escapeLiteral',
  'escapeIdentifier',
]);

// Marks an interpolated expression in the static text.
const MARK = '\u0001';
// An operand: an interpolation, a quoted or bare (optionally dotted) identifier.
const PART = `(?:${MARK}|"(?:[^"]|"")*"|\`[^\`]*\`|[A-Za-z_][\\w$]*)`;
const ID = `${PART}(?:\\s*\\.\\s*(?:${PART}|\\*))*`;
const ALIAS = `(?:\\s+(?:AS\\s+)?(?!(?:WHERE|SET|ON|USING|JOIN|INNER|LEFT|RIGHT|FULL|CROSS|ORDER|GROUP|LIMIT|RETURNING)\\b)[A-Za-z_]\\w*)?`;
const OPERATOR = `(?:=|<>|!=|<=|>=|<|>|@>|<@|\\bIN\\s*\\(|\\bNOT\\s+IN\\b|\\bIS\\s+(?:NOT\\s+)?(?:NULL|TRUE|FALSE|DISTINCT)\\b|\\bI?LIKE\\b|\\bBETWEEN\\b)`;
// A bound or rendered operand on the right of an operator.
const VALUE = `(?:\\$\\d|\\?|:\\.{0,3}[A-Za-z_]|${MARK}|'|\\d|NULL\\b|DEFAULT\\b|TRUE\\b|FALSE\\b|EXCLUDED\\.|now\\(|${ID})`;

const re = (source) => new RegExp(source, 'i');
/** Clause shapes: weight 2 alone makes the text SQL, weight-1 shapes need a second one. */
const SHAPES = [
  [
    2,
    re(
      `\\bSELECT\\s+(?:DISTINCT\\s+|ALL\\s+)?(?:\\*|${MARK}|\\$\\d|\\d|'|\\(|${ID}\\s*(?:,|\\(|\\bAS\\b|\\bFROM\\b|::|$))`,
    ),
  ],
  [
    2,
    re(
      `\\bINSERT\\s+(?:IGNORE\\s+)?INTO\\s+${ID}${ALIAS}\\s*(?:\\(|\\b(?:SELECT|VALUES|DEFAULT|WITH|OVERRIDING)\\b|$)`,
    ),
  ],
  [2, re(`\\bUPDATE\\s+(?:ONLY\\s+)?${ID}${ALIAS}\\s+SET\\s+(?:${MARK}|${ID}\\s*=)`)],
  [2, re(`\\bDELETE\\s+FROM\\s+${ID}${ALIAS}\\s*(?:\\bWHERE\\b|\\bUSING\\b|\\bRETURNING\\b|;|$)`)],
  [2, re(`\\b(?:WHERE|HAVING)\\s+(?:NOT\\s+)?\\(?\\s*${ID}\\s*${OPERATOR}`)],
  [2, re(`\\bSET\\s+${ID}\\s*=\\s*${VALUE}`)],
  [
    2,
    re(
      `\\b(?:(?:INNER|LEFT|RIGHT|FULL|CROSS)\\s+(?:OUTER\\s+)?JOIN|JOIN\\s+(?:LATERAL\\s+)?${ID}${ALIAS}\\s+(?:ON\\s+\\(?\\s*${ID}\\s*${OPERATOR}|USING\\s*\\())`,
    ),
  ],
  [2, re(`\\bON\\s+CONFLICT\\b`)],
  [
    2,
    re(
      `\\b(?:CREATE\\s+(?:UNIQUE\\s+|${MARK}\\s*)?(?:TABLE|INDEX|SCHEMA|TYPE|SEQUENCE|VIEW|DATABASE|EXTENSION)|ALTER\\s+(?:TABLE|INDEX|TYPE|DATABASE|SCHEMA)|DROP\\s+(?:TABLE|INDEX|SCHEMA|TYPE|SEQUENCE|VIEW|DATABASE|EXTENSION|CONSTRAINT|COLUMN)|ADD\\s+(?:COLUMN|CONSTRAINT)|PRIMARY\\s+KEY\\s*\\(|TRUNCATE\\s+(?:TABLE\\s+)?${ID})\\b`,
    ),
  ],
  [2, /^\s*(?:PREPARE|EXECUTE)\s+\S/],
  // A value quoted into the text: `state = '${x}'`, `IN ('${x}'`.
  [2, re(`(?:${ID}\\s*(?:=|<>|!=|<=|>=|<|>)|\\bIN\\s*\\(|\\bI?LIKE)\\s*'[^']*${MARK}`)],
  [1, re(`\\b(?:AND|OR|ON|WHEN)\\s+(?:NOT\\s+)?\\(?\\s*${ID}\\s*${OPERATOR}\\s*${VALUE}`)],
  [
    1,
    re(`\\bFROM\\s+${ID}${ALIAS}\\s*(?:\\bWHERE\\b|\\bJOIN\\b|\\bINNER\\b|\\bLEFT\\b|,|;|\\)|$)`),
  ],
  [1, re(`\\b(?:ORDER|GROUP)\\s+BY\\s+${ID}`)],
  [1, re(`\\b(?:LIMIT|OFFSET)\\s+(?:\\d|\\$\\d|\\?|${MARK})`)],
  [1, re(`\\bRETURNING\\s+(?:\\*|${ID})`)],
  // "got values (…)" is English too; INSERT INTO carries an insert.
  [1, re(`\\bVALUES\\s*\\(\\s*${VALUE}`)],
  [1, re(`\\bFOR\\s+(?:NO\\s+KEY\\s+)?UPDATE\\b`)],
  [1, re(`${ID}\\s+IS\\s+(?:NOT\\s+)?NULL\\b`)],
  [1, re(`\\b(?:NOT\\s+)?IN\\s*\\(\\s*(?:'|\\$\\d|\\?|:|${MARK})`)],
];
// Uppercase only: "Execute the step again" is English.
const SQL_LEVEL_STATEMENT = /^\s*(PREPARE|EXECUTE)\s+\S/;
const LOG_METHODS = new Set(['log', 'warn', 'error', 'debug', 'verbose', 'fatal', 'info', 'trace']);

// Calls whose string argument is SQL by position (TypeORM's query builder, `query()`): one more point.
const SQL_ARGUMENT_METHODS = new Set([
  'query',
  'where',
  'andWhere',
  'orWhere',
  'having',
  'andHaving',
  'orHaving',
  'innerJoin',
  'leftJoin',
  'innerJoinAndSelect',
  'leftJoinAndSelect',
  'select',
  'addSelect',
  'orderBy',
  'addOrderBy',
  'groupBy',
  'addGroupBy',
]);

/** Whether the static text (interpolations as MARK) has the shape of SQL. */
function looksLikeSql(text, sqlArgument = false) {
  let score = sqlArgument ? 1 : 0;
  for (const [weight, shape] of SHAPES) {
    if (shape.test(text)) {
      score += weight;
      if (score >= 2) return true;
    }
  }
  return false;
}

function unwrap(node) {
  let current = node;
  while (
    current &&
    (current.type === 'TSAsExpression' ||
      current.type === 'TSNonNullExpression' ||
      current.type === 'TSSatisfiesExpression' ||
      current.type === 'TSTypeAssertion' ||
      current.type === 'ChainExpression')
  ) {
    current = current.expression;
  }
  return current;
}

function calleeName(call) {
  const callee = unwrap(call.callee);
  if (callee.type === 'Identifier') return callee.name;
  if (
    callee.type === 'MemberExpression' &&
    !callee.computed &&
    callee.property.type === 'Identifier'
  ) {
    return callee.property.name;
  }
  return null;
}

function memberRoot(node) {
  let current = unwrap(node);
  while (current.type === 'MemberExpression') current = unwrap(current.object);
  return current;
}

function isStringLiteral(node) {
  return node.type === 'Literal' && typeof node.value === 'string';
}

function isConcat(node) {
  return node.type === 'BinaryExpression' && node.operator === '+';
}

/** The operands of a `+` chain, templates inlined as text and expressions. */
function flattenConcat(node, parts) {
  const current = unwrap(node);
  if (isConcat(current)) {
    flattenConcat(current.left, parts);
    flattenConcat(current.right, parts);
  } else if (isStringLiteral(current)) {
    parts.push({ text: current.value });
  } else if (current.type === 'TemplateLiteral') {
    current.quasis.forEach((quasi, index) => {
      parts.push({ text: quasi.value.cooked ?? quasi.value.raw });
      if (index < current.expressions.length)
        parts.push({ expression: current.expressions[index] });
    });
  } else {
    parts.push({ expression: current });
  }
  return parts;
}

function templateParts(node) {
  const parts = [];
  node.quasis.forEach((quasi, index) => {
    parts.push({ text: quasi.value.cooked ?? quasi.value.raw });
    if (index < node.expressions.length) parts.push({ expression: node.expressions[index] });
  });
  return parts;
}

/** Syntactically a number: what may follow a `$` to make a `$n` placeholder. */
function isNumeric(node) {
  const current = unwrap(node);
  switch (current.type) {
    case 'Literal':
      return typeof current.value === 'number';
    case 'Identifier':
    case 'MemberExpression':
    case 'UpdateExpression':
      return true;
    case 'UnaryExpression':
      return current.operator === '-' || current.operator === '+';
    case 'BinaryExpression':
      return (
        ['+', '-', '*', '/', '%'].includes(current.operator) &&
        isNumeric(current.left) &&
        isNumeric(current.right)
      );
    case 'CallExpression':
      return ['push', 'Number'].includes(calleeName(current));
    default:
      return false;
  }
}

function findVariable(scope, name) {
  for (let current = scope; current; current = current.upper) {
    const variable = current.set.get(name);
    if (variable) return variable;
  }
  return null;
}

module.exports = {
  meta: {
    type: 'problem',
    docs: {
      description:
        'Forbid rendering values into SQL text: bind parameters, quote identifiers with quoteIdentifier()/quoteTable() (SPEC §16.1)',
    },
    schema: [],
    messages: {
      valueInSql:
        '`{{expression}}` is rendered into SQL text. Bind values as parameters ($n, ?, :name); quote identifiers with quoteIdentifier()/quoteTable(); ' +
        'already-built SQL goes in a name ending in Sql/Fragment/Clause/Columns/Table (SPEC §16.1: no value in SQL text).',
      literalEscape:
        '`{{name}}` renders a value as a SQL literal. Bind it as a parameter instead (SPEC §16.1: no value in SQL text).',
      identifierEscape:
        '`{{name}}` escapes text for SQL outside quoteIdentifier()/quoteTable(). Values are bound parameters, and identifiers are quoted by that one function (SPEC §16.1).',
      escapingImport:
        "`{{name}}` from '{{source}}' formats values into SQL text. Bind values as parameters (SPEC §16.1).",
      sqlLevelStatement:
        'SQL-level {{keyword}} is not allowed: save round trips with protocol-level named statements ({ name, text, values }) or pipelining (SPEC §16.1).',
    },
  },

  create(context) {
    const sourceCode = context.sourceCode;
    const reported = new Set();
    const services = sourceCode.parserServices;
    const checker = services && services.program ? services.program.getTypeChecker() : null;

    /** What may follow a `$`: typed `number` when types are known, else a number by its syntax. */
    function isPlaceholderNumber(node) {
      if (!isNumeric(node)) return false;
      if (!checker) return true;
      const tsNode = services.esTreeNodeToTSNodeMap.get(unwrap(node));
      if (!tsNode) return true;
      const type = checker.getBaseTypeOfLiteralType(checker.getTypeAtLocation(tsNode));
      return checker.typeToString(type) === 'number';
    }

    function report(node, messageId, data) {
      const key = `${messageId}:${node.range[0]}:${node.range[1]}`;
      if (reported.has(key)) return;
      reported.add(key);
      context.report({ node, messageId, data });
    }

    /** The interpolated nodes that are not allowed, as leaves (empty: allowed). */
    function offenders(node, seen) {
      const current = unwrap(node);
      switch (current.type) {
        case 'Literal':
          return [];
        case 'TemplateLiteral':
          return partsOffenders(templateParts(current), seen);
        case 'ConditionalExpression':
          return [...offenders(current.consequent, seen), ...offenders(current.alternate, seen)];
        case 'LogicalExpression':
          return [...offenders(current.left, seen), ...offenders(current.right, seen)];
        case 'BinaryExpression':
          return current.operator === '+'
            ? [...offenders(current.left, seen), ...offenders(current.right, seen)]
            : [current];
        case 'Identifier':
          if (current.name === 'undefined') return [];
          if (UPPER_SNAKE.test(current.name) || FRAGMENT_NAME.test(current.name)) return [];
          return isStaticConst(current, seen) ? [] : [current];
        case 'MemberExpression': {
          if (!current.computed && current.property.type === 'Identifier') {
            const name = current.property.name;
            if (UPPER_SNAKE.test(name) || FRAGMENT_NAME.test(name)) return [];
          }
          const root = memberRoot(current);
          return root.type === 'Identifier' && UPPER_SNAKE.test(root.name) ? [] : [current];
        }
        case 'CallExpression': {
          const name = calleeName(current);
          if (name && (QUOTING_FUNCTIONS.has(name) || PLACEHOLDER_CALL.test(name))) return [];
          const callee = unwrap(current.callee);
          if (callee.type === 'MemberExpression' && name === 'join') {
            const separator = current.arguments[0];
            if (
              separator &&
              !(separator.type === 'Literal' || separator.type === 'TemplateLiteral')
            )
              return [current];
            return offenders(callee.object, seen).length === 0 ? [] : [current];
          }
          if (callee.type === 'MemberExpression' && name === 'map') {
            const mapper = current.arguments[0] && unwrap(current.arguments[0]);
            if (mapper && isAllowedFunction(mapper, seen)) return [];
          }
          // A local helper that only builds allowed text (`const next = () => `$${++slot}``).
          if (callee.type === 'Identifier' && isAllowedFunction(callee, seen)) return [];
          // …or a method of this class that does (`this.tableOf(entity)` returning quoteTable(…)).
          if (isAllowedOwnMethod(current, seen)) return [];
          return [current];
        }
        default:
          return [current];
      }
    }

    /** A mapper whose every result is allowed, e.g. `(column) => quoteIdentifier(column)`. */
    function isAllowedFunction(fn, seen) {
      if (fn.type === 'Identifier') {
        if (QUOTING_FUNCTIONS.has(fn.name) || PLACEHOLDER_CALL.test(fn.name)) return true;
        const declared = constInitializer(fn, seen, true);
        if (!declared) return false;
        seen.add(declared.variable);
        try {
          return isAllowedFunction(unwrap(declared.node), seen);
        } finally {
          seen.delete(declared.variable);
        }
      }
      if (
        fn.type !== 'ArrowFunctionExpression' &&
        fn.type !== 'FunctionExpression' &&
        fn.type !== 'FunctionDeclaration'
      ) {
        return false;
      }
      if (fn.body.type !== 'BlockStatement') return offenders(fn.body, seen).length === 0;
      const results = [];
      const visit = (statement) => {
        if (!statement || typeof statement !== 'object') return;
        if (statement.type === 'ReturnStatement') {
          results.push(statement.argument);
          return;
        }
        if (/Function/.test(statement.type)) return;
        for (const key of Object.keys(statement)) {
          if (key === 'parent') continue;
          const child = statement[key];
          if (Array.isArray(child)) child.forEach(visit);
          else if (child && typeof child.type === 'string') visit(child);
        }
      };
      visit(fn.body);
      return (
        results.length > 0 &&
        results.every((result) => result && offenders(result, seen).length === 0)
      );
    }

    /** `this.name(…)` where the enclosing class's only `name` method returns allowed text. */
    function isAllowedOwnMethod(call, seen) {
      const callee = unwrap(call.callee);
      if (
        callee.type !== 'MemberExpression' ||
        callee.computed ||
        callee.object.type !== 'ThisExpression' ||
        callee.property.type !== 'Identifier'
      ) {
        return false;
      }
      const owner = sourceCode
        .getAncestors(call)
        .reverse()
        .find((ancestor) => ancestor.type === 'ClassBody');
      if (!owner) return false;
      const methods = owner.body.filter(
        (member) =>
          member.type === 'MethodDefinition' &&
          !member.computed &&
          member.key.type === 'Identifier' &&
          member.key.name === callee.property.name,
      );
      if (methods.length !== 1 || methods[0].kind !== 'method' || seen.has(methods[0]))
        return false;
      seen.add(methods[0]);
      try {
        return isAllowedFunction(methods[0].value, seen);
      } finally {
        seen.delete(methods[0]);
      }
    }

    /**
     * The initializer of the `const` (or, with `functions`, the function declaration) an
     * identifier refers to, when there is exactly one and it is not being resolved already.
     */
    function constInitializer(identifier, seen, functions = false) {
      const variable = findVariable(sourceCode.getScope(identifier), identifier.name);
      if (!variable || variable.defs.length !== 1 || seen.has(variable)) return null;
      const [definition] = variable.defs;
      if (functions && definition.type === 'FunctionName')
        return { variable, node: definition.node };
      if (
        definition.type !== 'Variable' ||
        definition.parent.kind !== 'const' ||
        definition.node.id.type !== 'Identifier' ||
        !definition.node.init
      ) {
        return null;
      }
      return { variable, node: definition.node.init };
    }

    /** A `const` whose initializer is built only from allowed parts (`const keySql = '…'`). */
    function isStaticConst(identifier, seen) {
      const declared = constInitializer(identifier, seen);
      if (!declared) return false;
      seen.add(declared.variable);
      try {
        return offenders(declared.node, seen).length === 0;
      } finally {
        seen.delete(declared.variable);
      }
    }

    /** The offending interpolations of text parts; a number right after `$` is a placeholder. */
    function partsOffenders(parts, seen) {
      const found = [];
      let before = '';
      for (const part of parts) {
        if ('text' in part) {
          before += part.text;
          continue;
        }
        const placeholderNumber = /\$$/.test(before) && isPlaceholderNumber(part.expression);
        before += MARK;
        if (!placeholderNumber) found.push(...offenders(part.expression, seen));
      }
      return found;
    }

    /** A direct argument of `qb.where(…)`, `manager.query(…)` and the like. */
    function isSqlArgument(node) {
      const parent = node.parent;
      return Boolean(
        parent &&
        parent.type === 'CallExpression' &&
        parent.arguments.includes(node) &&
        parent.callee.type === 'MemberExpression' &&
        SQL_ARGUMENT_METHODS.has(calleeName(parent)),
      );
    }

    /** An error message or log line: text for people, even when it quotes SQL. */
    function isMessage(node) {
      let current = node;
      while (
        current.parent &&
        (isConcat(current.parent) ||
          current.parent.type === 'ConditionalExpression' ||
          current.parent.type === 'LogicalExpression' ||
          current.parent.type === 'TemplateLiteral' ||
          current.parent.type === 'TSAsExpression')
      ) {
        current = current.parent;
      }
      const parent = current.parent;
      if (!parent || (parent.type !== 'NewExpression' && parent.type !== 'CallExpression'))
        return false;
      if (!parent.arguments.includes(current)) return false;
      if (parent.callee.type === 'Super') {
        const owner = sourceCode
          .getAncestors(parent)
          .reverse()
          .find(
            (ancestor) =>
              ancestor.type === 'ClassDeclaration' || ancestor.type === 'ClassExpression',
          );
        return Boolean(
          owner &&
          owner.superClass &&
          /(?:Error|Exception)$/.test(sourceCode.getText(owner.superClass)),
        );
      }
      const name = calleeName(parent);
      if (!name) return false;
      if (/(?:Error|Exception)$/.test(name)) return true;
      return (
        parent.type === 'CallExpression' &&
        parent.callee.type === 'MemberExpression' &&
        LOG_METHODS.has(name)
      );
    }

    function check(node, parts) {
      const text = parts.map((part) => ('text' in part ? part.text : MARK)).join('');
      const statement = SQL_LEVEL_STATEMENT.exec(text);
      if (statement) report(node, 'sqlLevelStatement', { keyword: statement[1].toUpperCase() });
      if (
        !parts.some((part) => 'expression' in part) ||
        !looksLikeSql(text, isSqlArgument(node)) ||
        isMessage(node)
      )
        return;
      for (const offender of partsOffenders(parts, new Set())) {
        report(offender, 'valueInSql', {
          expression: sourceCode.getText(offender).replace(/\s+/g, ' ').slice(0, 80),
        });
      }
    }

    function isInConcat(node) {
      let current = node.parent;
      while (
        current &&
        (current.type === 'TSAsExpression' || current.type === 'TSNonNullExpression')
      )
        current = current.parent;
      return Boolean(current && isConcat(current));
    }

    return {
      TemplateLiteral(node) {
        if (node.parent.type === 'TaggedTemplateExpression' || isInConcat(node)) return;
        check(node, templateParts(node));
      },
      BinaryExpression(node) {
        if (node.operator !== '+' || isInConcat(node)) return;
        const parts = flattenConcat(node, []);
        if (!parts.some((part) => 'text' in part)) return;
        check(node, parts);
      },
      Literal(node) {
        if (typeof node.value !== 'string' || isInConcat(node)) return;
        if (
          node.parent.type === 'ImportDeclaration' ||
          node.parent.type === 'ExportAllDeclaration' ||
          node.parent.type === 'ExportNamedDeclaration'
        )
          return;
        const statement = SQL_LEVEL_STATEMENT.exec(node.value);
        if (statement) report(node, 'sqlLevelStatement', { keyword: statement[1].toUpperCase() });
      },
      CallExpression(node) {
        const name = calleeName(node);
        if (!name) return;
        if (LITERAL_ESCAPERS.has(name)) {
          report(node.callee, 'literalEscape', { name });
          return;
        }
        const method = unwrap(node.callee).type === 'MemberExpression';
        if (!IDENTIFIER_ESCAPERS.has(name) && !(method && ESCAPE_METHODS.has(name))) return;
        // Only inside the one quoting function may an identifier be escaped directly.
        const inside = sourceCode.getAncestors(node).some((ancestor) => {
          const key =
            ancestor.type === 'FunctionDeclaration'
              ? ancestor.id
              : ancestor.type === 'MethodDefinition' ||
                  ancestor.type === 'Property' ||
                  ancestor.type === 'PropertyDefinition'
                ? ancestor.key
                : ancestor.type === 'VariableDeclarator'
                  ? ancestor.id
                  : null;
          return key && key.type === 'Identifier' && QUOTING_FUNCTIONS.has(key.name);
        });
        if (!inside) report(node.callee, 'identifierEscape', { name });
      },
      MemberExpression(node) {
        // `client.escapeLiteral` handed on without a call (`.map(client.escapeLiteral)`).
        if (
          node.computed ||
          node.property.type !== 'Identifier' ||
          !LITERAL_ESCAPERS.has(node.property.name)
        )
          return;
        if (node.parent.type === 'CallExpression' && node.parent.callee === node) return;
        report(node, 'literalEscape', { name: node.property.name });
      },
      ImportDeclaration(node) {
        const source = node.source.value;
        if (typeof source !== 'string' || !ESCAPING_MODULES.test(source)) return;
        for (const specifier of node.specifiers) {
          const imported =
            specifier.type === 'ImportSpecifier'
              ? specifier.imported.type === 'Identifier'
                ? specifier.imported.name
                : specifier.imported.value
              : null;
          const whole =
            specifier.type !== 'ImportSpecifier' &&
            /^(?:sqlstring|pg-format|pg-escape)$/.test(source);
          if (whole || (imported && ESCAPING_EXPORTS.has(imported))) {
            report(specifier, 'escapingImport', { name: imported ?? specifier.local.name, source });
          }
        }
      },
    };
  },
};
