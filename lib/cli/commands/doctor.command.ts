import { Command } from 'nest-commander';
import { readInstalledVersion } from '../../compatibility/installed-version.reader';
import { MissingMigrationError } from '../../errors/missing-migration.error';
import { describeTransport } from '../../queue/transport-outage';
import type { CliServices } from '../cli-app.host';
import { CliConnectionError } from '../cli-connection.error';
import { CliExitCode } from '../cli-exit-code';
import { expectArguments } from '../command-arguments';
import {
  baseSchemaMissingCheck,
  databaseCheck,
  doctorExitCode,
  migrationsCheck,
  skippedCheck,
  statementsCheck,
  transportCheck,
  versionsCheck,
  workersCheck,
  type DoctorCheck,
} from '../doctor-checks';
import { formatTable } from '../text-table';
import { GenevaDriveCommand } from './geneva-drive.command';

/**
 * `geneva-drive doctor`: database reachable, migrations applied, PostgreSQL statements fit the
 * connection, transport reachable, workers seen, supported versions. Exit code 3 when the
 * database or the transport cannot be reached, 1 when another check failed (a warning, such as
 * no worker seen, does not fail it).
 */
@Command({
  name: 'doctor',
  description: 'Check the database, migrations, statements, transport, workers and versions',
})
export class DoctorCommand extends GenevaDriveCommand {
  protected async execute(params: string[]): Promise<CliExitCode> {
    expectArguments(params, 'no arguments', 0);
    const checks = await this.check();
    const exitCode = doctorExitCode(checks);
    this.output.result(
      formatTable(
        ['CHECK', 'STATUS', 'DETAILS'],
        checks.map((check) => [check.name, check.status.toUpperCase(), check.message]),
      ),
      { healthy: exitCode === CliExitCode.done, checks },
    );
    return exitCode;
  }

  private async check(): Promise<DoctorCheck[]> {
    let services: CliServices;
    try {
      services = await this.host.services();
    } catch (error) {
      // The app did not boot: say which check that is, and what was not checked because of it.
      if (error instanceof CliConnectionError) {
        return [
          { name: 'database', status: 'fail', message: error.message },
          skippedCheck('migrations', 'needs the database'),
          skippedCheck('statements', 'needs the database'),
          skippedCheck('transport', 'the app did not boot'),
          skippedCheck('workers', 'the app did not boot'),
          versionsCheck(readInstalledVersion),
        ];
      }
      if (error instanceof MissingMigrationError) {
        return [
          { name: 'database', status: 'ok', message: 'reachable' },
          baseSchemaMissingCheck(error.message),
          skippedCheck('statements', 'the app did not boot'),
          skippedCheck('transport', 'the app did not boot'),
          skippedCheck('workers', 'the app did not boot'),
          versionsCheck(readInstalledVersion),
        ];
      }
      throw error;
    }
    const findings = await services.probe.read();
    return [
      databaseCheck(findings),
      findings.database === 'up'
        ? migrationsCheck(await services.repository.refreshSchemaFeatures())
        : skippedCheck('migrations', 'needs the database'),
      findings.database === 'up'
        ? statementsCheck(
            await services.repository.databaseRoute(),
            services.options.preparedStatements,
          )
        : skippedCheck('statements', 'needs the database'),
      transportCheck(findings, describeTransport(services.options)),
      workersCheck(findings),
      versionsCheck(readInstalledVersion),
    ];
  }
}
