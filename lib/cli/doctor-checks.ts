import { SUPPORTED_PEER_VERSIONS } from '../common/constants';
import type { InstalledVersionReader } from '../compatibility/installed-version.reader';
import { findUnsupportedPeers, unsupportedPeersMessage } from '../compatibility/unsupported-peers';
import type { HealthFindings } from '../health/health-findings.interface';
import type { DatabaseRoute, SchemaFeatures } from '../ports/workflow.repository';
import { CliExitCode } from './cli-exit-code';

/** One line of `doctor`: what was checked, how it went, and in words what is wrong and the fix. */
export interface DoctorCheck {
  name: 'database' | 'migrations' | 'statements' | 'transport' | 'workers' | 'versions';
  status: 'ok' | 'warn' | 'fail' | 'skipped';
  message: string;
}

/** The optional migrations, by the feature they bring. */
const OPTIONAL_MIGRATIONS: ReadonlyArray<[keyof SchemaFeatures, string]> = [
  ['resumable', 'resumable steps (cursor, continues_from_id)'],
  ['signals', 'signals (the signals table, signal_id, waiting_since)'],
  ['waitTimeouts', 'signal-wait timeouts (wait_deadline_at)'],
  ['workflowContext', 'workflow context (context, trace_parent)'],
];

const RUN_MIGRATIONS =
  "add GENEVA_DRIVE_MIGRATIONS to the data source's migrations and run them (migrationsRun: true, or `typeorm migration:run`)";

export function databaseCheck(findings: HealthFindings): DoctorCheck {
  if (findings.database === 'up') return { name: 'database', status: 'ok', message: 'reachable' };
  const problem =
    findings.problems.find((text) => text.startsWith('database:')) ?? 'database: down';
  return {
    name: 'database',
    status: 'fail',
    message: `${problem.slice('database: '.length)}. Check the data source's host, port and credentials, and that the database is running and reachable from here.`,
  };
}

export function migrationsCheck(features: SchemaFeatures): DoctorCheck {
  const missing = OPTIONAL_MIGRATIONS.filter(([feature]) => !features[feature]).map(
    ([, what]) => what,
  );
  if (missing.length === 0) {
    return {
      name: 'migrations',
      status: 'ok',
      // Columns and tables only: the dashboard migration's indexes are not looked up.
      message: 'every table and column of GENEVA_DRIVE_MIGRATIONS is there',
    };
  }
  return {
    name: 'migrations',
    status: 'fail',
    message: `not run yet: ${missing.join('; ')}. Steps that need them fail until then: ${RUN_MIGRATIONS}.`,
  };
}

/** The base tables are missing (the app refused to boot with a MissingMigrationError). */
export function baseSchemaMissingCheck(message: string): DoctorCheck {
  return { name: 'migrations', status: 'fail', message };
}

/**
 * PostgreSQL's statements: named ones (`preparedStatements: true`) fail behind a transaction-mode
 * pooler that does not track them, unnamed ones cost PostgreSQL parsing and planning each time.
 * A warning when named statements run over a connection not proven direct; a hint when unnamed
 * ones run over a direct one. `route` null: not PostgreSQL.
 */
export function statementsCheck(
  route: DatabaseRoute | null,
  preparedStatements: boolean,
): DoctorCheck {
  if (route === null) return skippedCheck('statements', 'PostgreSQL only');
  const answers = `the server answers as ${route.server ?? 'a Unix socket'}`;
  if (preparedStatements && route.direct) {
    return {
      name: 'statements',
      status: 'ok',
      message: `named (preparedStatements: true), on a direct connection to ${route.target}`,
    };
  }
  if (preparedStatements) {
    return {
      name: 'statements',
      status: 'warn',
      message:
        `named (preparedStatements: true), but this connection is not shown to reach PostgreSQL directly ` +
        `(connected to ${route.target}, ${answers}). Behind a transaction-mode pooler they fail ` +
        'unless it is PgBouncer 1.21 or later with max_prepared_statements set; otherwise set preparedStatements: false.',
    };
  }
  return {
    name: 'statements',
    status: 'ok',
    message: route.direct
      ? `unnamed (the default, safe behind any pooler). This connection reaches PostgreSQL directly (${route.target}): ` +
        'preparedStatements: true would spare it parsing and planning each statement, about half its CPU per step.'
      : `unnamed (the default, safe behind any pooler; connected to ${route.target}, ${answers})`,
  };
}

/** `where`: what the transport is, as the messages name it ("Redis at 127.0.0.1:6379"). */
export function transportCheck(findings: HealthFindings, where: string): DoctorCheck {
  if (findings.transport === 'in-process') {
    return { name: 'transport', status: 'ok', message: 'in process (no transport to reach)' };
  }
  if (findings.transport === 'up') {
    return { name: 'transport', status: 'ok', message: `${where} answers` };
  }
  const problem =
    findings.problems.find((text) => text.startsWith('transport:')) ?? 'transport: down';
  return {
    name: 'transport',
    status: 'fail',
    message: `${where}: ${problem.slice('transport: '.length)}. Check the module's connection option (host, port, credentials) and that the server is running and reachable from here.`,
  };
}

export function workersCheck(findings: HealthFindings): DoctorCheck {
  if (findings.transport !== 'up' || findings.queues === undefined) {
    return { name: 'workers', status: 'skipped', message: 'needs the transport' };
  }
  const idle = findings.queues.filter((queue) => queue.workers === 0).map((queue) => queue.queue);
  const seen = findings.queues.map((queue) => `${queue.queue}: ${queue.workers}`).join(', ');
  if (idle.length === 0)
    return { name: 'workers', status: 'ok', message: `workers seen per queue: ${seen}` };
  return {
    name: 'workers',
    status: 'warn',
    message: `no worker consumes ${idle.map((name) => `'${name}'`).join(', ')}, so steps routed there wait. Start the app (worker not false, GENEVA_DRIVE_WORKER unset) with these queues in its queues option.`,
  };
}

export function versionsCheck(read: InstalledVersionReader): DoctorCheck {
  const unsupported = findUnsupportedPeers(read);
  if (unsupported.length > 0) {
    return { name: 'versions', status: 'fail', message: unsupportedPeersMessage(unsupported) };
  }
  const installed = Object.keys(SUPPORTED_PEER_VERSIONS)
    .map((name) => [name, read(name)] as const)
    .filter(([, version]) => version !== null)
    .map(([name, version]) => `${name} ${version}`);
  return { name: 'versions', status: 'ok', message: `supported: ${installed.join(', ')}` };
}

/** A check not run because an earlier one failed. */
export function skippedCheck(name: DoctorCheck['name'], because: string): DoctorCheck {
  return { name, status: 'skipped', message: because };
}

/** 3 when the database or the transport cannot be reached, 1 when another check failed, else 0. */
export function doctorExitCode(checks: readonly DoctorCheck[]): CliExitCode {
  const failed = checks.filter((check) => check.status === 'fail');
  if (failed.some((check) => check.name === 'database' || check.name === 'transport')) {
    return CliExitCode.cannotConnect;
  }
  return failed.length > 0 ? CliExitCode.refused : CliExitCode.done;
}
