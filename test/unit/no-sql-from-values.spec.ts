import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RuleTester } from 'eslint';
import tseslint from 'typescript-eslint';
import rule from '../../eslint-rules/no-sql-from-values.cjs';

// The lint rule that keeps SPEC §16.1 ("no value is ever rendered into SQL text") true for lib/.
// RuleTester registers its own describe/it blocks with jest.
const ruleTester = new RuleTester({
  languageOptions: { parser: tseslint.parser, ecmaVersion: 2022, sourceType: 'module' },
});

const valueInSql = (expression: string) => ({ messageId: 'valueInSql', data: { expression } });

ruleTester.run('geneva-drive/no-sql-from-values', rule, {
  valid: [
    // Identifiers through the one quoting function, values as numbered placeholders.
    'const text = `SELECT ${columnsSql} FROM ${quoteTable(t)} WHERE ${quoteIdentifier(c)} = $${i + 1}`;',
    'const text = `INSERT INTO ${quoteTable(table)} (${names.map((n) => quoteIdentifier(n)).join(", ")}) VALUES (${valuePlaceholders(n)})`;',
    'const text = `SELECT * FROM t WHERE id IN (${placeholder(1)}, ${this.placeholders(2, 3)})`;',
    'const text = `UPDATE ${quotedTable} SET ${setClause} WHERE "id" = $${params.push(id)}`;',
    // Constants and already-built fragments.
    "const text = `SELECT * FROM t WHERE state IN ('${RUNNABLE_STATES.join(\"', '\")}')`;",
    'const text = `SELECT ${this.selectColumns} FROM ${workflowTable} WHERE ${whereSql} ${lock ? "FOR UPDATE" : ""}`;',
    // A const built only from allowed parts, and local helpers that only make placeholders.
    'const keySql = `hashtext($2::text)`; const lock = `SELECT pg_try_advisory_lock($1::int, ${keySql}) AS locked`;',
    'const key = "hashtext($2::text)"; const lock = `SELECT pg_try_advisory_lock($1::int, ${key}) AS locked`;',
    [
      'let slot = 0;',
      'const next = () => `$${++slot}`;',
      'const sets = assigned.map((column) => `${column.quoted} = ${next()}`).join(", ");',
      'const text = `UPDATE ${quotedTable} SET ${sets} WHERE "id" IN (${ids.map(next).join(", ")})`;',
    ].join('\n'),
    [
      'class Writer {',
      '  tableOf(entity) { return quoteTable(this.metadataOf(entity)); }',
      '  text() { const executions = this.tableOf(A); return `UPDATE ${executions} SET "cursor" = $1 WHERE "id" = $2`; }',
      '}',
    ].join('\n'),
    // Ordinary messages and log lines, even with words SQL also uses.
    "const message = `Step '${name}' is not defined in ${cls}`;",
    "const message = `Step '${name}' is not defined in ${cls}. Use resumeAt() to continue, or declare @RemovedStep('${name}') where the step used to be.`;",
    'const message = `has ${which} beside an ExceptionPolicy or array; set ${which} on the ExceptionPolicy instead.`;',
    'const message = `is ${length} characters long, over the limit of ${maxLength}: ${value}`;',
    "const message = 'Select one of ' + options.join(', ') + ' from the list where it applies';",
    "logger.warn(`Queue '${queue}' is used by ${steps.join(', ')} but this process consumes only ${consumed}`);",
    // SQL quoted in an error message is text for a person, not a statement.
    "throw new ModuleOptionsError(`runs with sql_mode '${mode}'. Set sql_mode = '${without.join(',')}' (SET GLOBAL sql_mode)`);",
    // TypeORM's query builder binds values by name.
    "qb.where('execution.id = :id', { id });",
    'qb.where(`hero.${primary.propertyPath} = :heroId`, { heroId });',
    [
      'const column = `execution.${FILTER_COLUMN[kind]}`;',
      'qb.andWhere(`${column} >= :afterAt AND (${column} > :afterAt OR execution.id > :afterId)`, { afterAt, afterId });',
    ].join('\n'),
    // Values bound, text fixed.
    "await client.query('SELECT * FROM t WHERE id = $1', [id]);",
    // A tagged template is the tag's business (it may bind its interpolations).
    'const statement = sql`SELECT * FROM t WHERE id = ${id}`;',
    // Identifier escaping inside the one quoting function.
    'function quoteIdentifier(name) { return client.escapeIdentifier(name); }',
    'const quoteTable = (t) => driver.escape(t.schema) + "." + driver.escape(t.tableName);',
    // Protocol-level named statements are the allowed kind.
    "await client.query({ name: 'geneva_1', text: 'SELECT 1', values: [] });",
    "const message = 'Execute the step again';",
    // Recognising those statements is not issuing them; a bare escape() may escape a RegExp.
    "const prepared = statement.startsWith('PREPARE ');",
    'const pattern = new RegExp(`^${escape(level)} must be an object`);',
  ],
  invalid: [
    {
      code: "const text = `SELECT * FROM t WHERE id = '${id}'`;",
      errors: [valueInSql('id')],
    },
    {
      code: "const text = 'WHERE id = ' + id;",
      errors: [valueInSql('id')],
    },
    {
      code: "const text = 'SELECT * FROM t ' + `WHERE ${quoteIdentifier(c)} = ` + row.value + ' LIMIT 1';",
      errors: [valueInSql('row.value')],
    },
    {
      // A raw name is not a quoted one.
      code: 'const text = `UPDATE ${metadata.tableName} SET "state" = $1 WHERE "id" = ${id}`;',
      errors: [valueInSql('metadata.tableName'), valueInSql('id')],
    },
    {
      code: 'const text = `INSERT INTO ${quoteTable(t)} ("a") VALUES (${values.join(", ")})`;',
      errors: [valueInSql('values.join(", ")')],
    },
    {
      // A number is a value too: only right after `$` does it make a placeholder.
      code: 'const text = `SELECT * FROM t WHERE "id" = $1 LIMIT ${limit}`;',
      errors: [valueInSql('limit')],
    },
    {
      // A const fragment is followed back to what it was built from: both the value and the use.
      code: 'const notDeleted = ` AND "deleted_at" IS NULL AND "owner" = ${owner}`; const text = `SELECT * FROM t WHERE "id" = $1${notDeleted}`;',
      errors: [valueInSql('owner'), valueInSql('notDeleted')],
    },
    {
      // Not SQL-shaped where it is built: reported where it is used.
      code: 'const owner = request.owner; const text = `SELECT * FROM t WHERE "owner" = ${owner}`;',
      errors: [valueInSql('owner')],
    },
    {
      code: 'const sets = changes.map((c) => `${quoteIdentifier(c.name)} = ${literal(c.value)}`); const text = `UPDATE ${quoteTable(t)} SET ${sets.join(", ")} WHERE "id" = $1`;',
      errors: [valueInSql('sets.join(", ")')],
    },
    {
      code: [
        'class Writer {',
        '  tableOf(entity) { return this.names.get(entity); }',
        '  text() { return `UPDATE ${this.tableOf(A)} SET "cursor" = $1 WHERE "id" = $2`; }',
        '}',
      ].join('\n'),
      errors: [valueInSql('this.tableOf(A)')],
    },
    {
      // TypeORM where strings: a value quoted into the text.
      code: "qb.where(`execution.state = '${kind}'`);",
      errors: [valueInSql('kind')],
    },
    {
      code: 'qb.where(`workflow.state IN (${states.map((s) => `\'${s}\'`).join(", ")})`);',
      errors: [valueInSql('states.map((s) => `\'${s}\'`).join(", ")')],
    },
    {
      code: 'const text = `DELETE FROM ${quoteTable(t)} WHERE "id" = ${connection.escape(id)}`;',
      errors: [valueInSql('connection.escape(id)'), { messageId: 'identifierEscape' }],
    },
    {
      code: 'const lit = client.escapeLiteral(x);',
      errors: [{ messageId: 'literalEscape', data: { name: 'escapeLiteral' } }],
    },
    {
      code: 'const rendered = values.map(client.escapeLiteral);',
      errors: [{ messageId: 'literalEscape', data: { name: 'escapeLiteral' } }],
    },
    {
      code: 'const name = driver.escape(column.databaseName);',
      errors: [{ messageId: 'identifierEscape', data: { name: 'escape' } }],
    },
    {
      code: "import { escape, format } from 'mysql2';",
      errors: [{ messageId: 'escapingImport' }, { messageId: 'escapingImport' }],
    },
    {
      code: "const text = 'PREPARE x AS SELECT * FROM t WHERE id = $1';",
      errors: [{ messageId: 'sqlLevelStatement', data: { keyword: 'PREPARE' } }],
    },
    {
      code: 'sql.push(`EXECUTE ${nameSql}(${valuesSql})`);',
      errors: [{ messageId: 'sqlLevelStatement', data: { keyword: 'EXECUTE' } }],
    },
    {
      code: 'await queryRunner.query(`ALTER TABLE ${quoteTable(t)} ADD COLUMN "x" text DEFAULT ${defaultValue}`);',
      errors: [valueInSql('defaultValue')],
    },
  ],
});

// With type information (as `npm run lint` has it), what follows `$` must be typed `number`:
// `$${name}` with a string would put the string itself into the text.
const typedRuleTester = new RuleTester({
  languageOptions: {
    parser: tseslint.parser,
    parserOptions: { projectService: { allowDefaultProject: ['*.ts'] }, tsconfigRootDir: tmpdir() },
  },
});
const typed = (code: string) => ({ code, filename: join(tmpdir(), 'no-sql-from-values.typed.ts') });

typedRuleTester.run('geneva-drive/no-sql-from-values (typed)', rule, {
  valid: [
    typed(
      'declare const index: number; const text = `SELECT * FROM t WHERE "id" = $${index + 1}`;',
    ),
    typed(
      'declare const params: unknown[]; const text = `SELECT * FROM t WHERE "id" = $${params.push(1)}`;',
    ),
  ],
  invalid: [
    {
      ...typed('declare const slot: string; const text = `SELECT * FROM t WHERE "id" = $${slot}`;'),
      errors: [valueInSql('slot')],
    },
  ],
});
