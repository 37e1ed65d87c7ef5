import { CliConnectionError } from '../../../lib/cli/cli-connection.error';
import { CliExitCode } from '../../../lib/cli/cli-exit-code';
import { CliOutput } from '../../../lib/cli/cli-output';
import { CliUsageError } from '../../../lib/cli/cli-usage.error';
import {
  doctorExitCode,
  migrationsCheck,
  statementsCheck,
  type DoctorCheck,
} from '../../../lib/cli/doctor-checks';
import { exitCodeOf, isConnectionError } from '../../../lib/cli/exit-code-of';
import { cell, formatFields, formatTable } from '../../../lib/cli/text-table';
import {
  InvalidArgumentError,
  InvalidStateError,
  ModuleOptionsError,
  StepNotDefinedError,
  WorkflowNotFoundError,
  WorkflowNotOngoingError,
} from '../../../lib';

const withCode = (code: string, message = code) => Object.assign(new Error(message), { code });

describe('geneva-drive exit codes', () => {
  it.each([
    ['a workflow in the wrong state', new InvalidStateError('x'), CliExitCode.refused],
    ['a finished workflow', new WorkflowNotOngoingError('x'), CliExitCode.refused],
    ['an unknown id', new WorkflowNotFoundError('x'), CliExitCode.refused],
    ['an unknown step', new StepNotDefinedError('x'), CliExitCode.refused],
    ['any other error', new Error('x'), CliExitCode.refused],
    ['a usage error', new CliUsageError('x'), CliExitCode.usage],
    ['a bad argument', new InvalidArgumentError('x'), CliExitCode.usage],
    [
      "module options the CLI cannot run with (transport 'local')",
      new ModuleOptionsError('x'),
      CliExitCode.usage,
    ],
    ['commander: unknown option', withCode('commander.unknownOption'), CliExitCode.usage],
    [
      'commander: help shown',
      Object.assign(withCode('commander.helpDisplayed'), { exitCode: 0 }),
      CliExitCode.done,
    ],
    ['a refused connection', withCode('ECONNREFUSED'), CliExitCode.cannotConnect],
    ['PostgreSQL: unknown database', withCode('3D000'), CliExitCode.cannotConnect],
    ['SQLite: cannot open the file', withCode('SQLITE_CANTOPEN'), CliExitCode.cannotConnect],
    ['the CLI could not connect', new CliConnectionError('x'), CliExitCode.cannotConnect],
  ])('%s → %i', (_what, error, code) => {
    expect(exitCodeOf(error)).toBe(code);
  });

  it('finds a connection error behind a cause or inside an AggregateError (both IPv4 and IPv6 refused)', () => {
    expect(isConnectionError(new Error('wrapped', { cause: withCode('ETIMEDOUT') }))).toBe(true);
    expect(isConnectionError(new AggregateError([withCode('ECONNREFUSED')], 'connect'))).toBe(true);
    expect(isConnectionError(withCode('23505'))).toBe(false);
    expect(isConnectionError('ECONNREFUSED')).toBe(false);
  });

  it('doctor: 3 when the database or transport failed, 1 for any other failure, warnings pass', () => {
    const check = (name: DoctorCheck['name'], status: DoctorCheck['status']): DoctorCheck => ({
      name,
      status,
      message: '',
    });
    expect(doctorExitCode([check('database', 'ok'), check('workers', 'warn')])).toBe(0);
    expect(doctorExitCode([check('migrations', 'fail'), check('versions', 'ok')])).toBe(1);
    expect(doctorExitCode([check('migrations', 'fail'), check('transport', 'fail')])).toBe(3);
    expect(doctorExitCode([check('database', 'fail'), check('migrations', 'skipped')])).toBe(3);
  });
});

describe('geneva-drive output', () => {
  it('formatTable aligns the columns two spaces apart, without trailing blanks', () => {
    expect(
      formatTable(
        ['ID', 'STATE'],
        [
          ['a', 'finished'],
          ['bbbb', 'ready'],
        ],
      ),
    ).toBe(['ID    STATE', 'a     finished', 'bbbb  ready'].join('\n'));
  });

  it('formatFields aligns the values; cells show nothing as -, dates in ISO, objects as JSON', () => {
    const at = new Date('2026-01-02T03:04:05.000Z');
    expect(
      formatFields([
        ['id', 'x'],
        ['created at', at],
        ['metadata', null],
      ]),
    ).toBe(
      ['id:          x', 'created at:  2026-01-02T03:04:05.000Z', 'metadata:    -'].join('\n'),
    );
    expect(cell({ a: 1 })).toBe('{"a":1}');
    expect(cell('')).toBe('-');
  });

  function captured(json: boolean) {
    const out: string[] = [];
    const err: string[] = [];
    const output = new CliOutput(json, {
      stdout: { write: (text: string) => out.push(text) },
      stderr: { write: (text: string) => err.push(text) },
    });
    return { output, out, err };
  }

  it('--json: the result and a failure are each one JSON document on stdout', () => {
    const { output, out, err } = captured(true);
    output.result('text', { workflows: [] });
    output.failure(new WorkflowNotFoundError('No workflow'), CliExitCode.refused);
    expect(out.map((text) => JSON.parse(text) as unknown)).toEqual([
      { workflows: [] },
      { error: { name: 'WorkflowNotFoundError', message: 'No workflow' }, exitCode: 1 },
    ]);
    expect(err).toEqual([]);
  });

  it('text: the result on stdout, a failure on stderr', () => {
    const { output, out, err } = captured(false);
    output.result('a table', {});
    output.failure(new Error('refused'), CliExitCode.refused);
    expect(out).toEqual(['a table\n']);
    expect(err).toEqual(['geneva-drive: refused\n']);
  });
});

describe('doctor: migrations', () => {
  const all = { resumable: true, signals: true, waitTimeouts: true, workflowContext: true };

  it('passes when every optional table and column is there', () => {
    expect(migrationsCheck(all).status).toBe('ok');
  });

  it.each([
    ['resumable', /resumable steps/],
    ['signals', /signals \(the signals table/],
    ['waitTimeouts', /signal-wait timeouts/],
    ['workflowContext', /workflow context \(context, trace_parent\)/],
  ] as const)('fails naming the migration when %s is missing, and the fix', (feature, named) => {
    const check = migrationsCheck({ ...all, [feature]: false });
    expect(check.status).toBe('fail');
    expect(check.message).toMatch(named);
    expect(check.message).toContain('GENEVA_DRIVE_MIGRATIONS');
  });
});

describe('doctor: statements', () => {
  const direct = { target: '127.0.0.1:5432', server: '127.0.0.1:5432', direct: true };
  const pooled = { target: '127.0.0.1:6433', server: '127.0.0.1:5432', direct: false };

  it('warns about named statements over a connection not shown to be direct, naming both ends and the fix', () => {
    const check = statementsCheck(pooled, true);
    expect(check.status).toBe('warn');
    expect(check.message).toContain(
      'connected to 127.0.0.1:6433, the server answers as 127.0.0.1:5432',
    );
    expect(check.message).toContain('PgBouncer 1.21 or later with max_prepared_statements');
    expect(check.message).toContain('set preparedStatements: false');
  });

  it('passes named statements on a direct connection, and unnamed ones anywhere', () => {
    expect(statementsCheck(direct, true)).toMatchObject({ status: 'ok', message: /^named/ });
    expect(statementsCheck(pooled, false)).toMatchObject({ status: 'ok', message: /^unnamed/ });
    expect(statementsCheck(pooled, false).message).not.toContain('preparedStatements: true');
  });

  it('suggests named statements for unnamed ones on a direct connection', () => {
    expect(statementsCheck(direct, false).message).toContain(
      'This connection reaches PostgreSQL directly (127.0.0.1:5432): preparedStatements: true',
    );
  });

  it('says a Unix socket where the server reports no address, and skips other databases', () => {
    const socket = { target: 'the Unix socket in /run/postgresql', server: null, direct: false };
    expect(statementsCheck(socket, true).message).toContain('the server answers as a Unix socket');
    expect(statementsCheck(null, true)).toEqual({
      name: 'statements',
      status: 'skipped',
      message: 'PostgreSQL only',
    });
  });
});
