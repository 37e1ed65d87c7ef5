import { Command } from 'nest-commander';
import { CliExitCode } from '../cli-exit-code';
import { expectArguments } from '../command-arguments';
import { formatFields } from '../text-table';
import { GenevaDriveCommand } from './geneva-drive.command';

/** `geneva-drive housekeeping`: one housekeeping pass (HousekeepingService.runReport()). */
@Command({
  name: 'housekeeping',
  description: 'Run one housekeeping pass and print what it did',
})
export class HousekeepingCommand extends GenevaDriveCommand {
  protected async execute(params: string[]): Promise<CliExitCode> {
    expectArguments(params, 'no arguments', 0);
    const { housekeeping } = await this.host.services();
    const { result, lostJobsReenqueued, waitTimeoutsFired, skipped } =
      await housekeeping.runReport();
    const fields = formatFields([
      ['workflows cleaned up', result.workflowsCleanedUp],
      ['step executions cleaned up', result.stepExecutionsCleanedUp],
      ['signals cleaned up', result.signalsCleanedUp],
      ['stuck in_progress recovered', result.stuckInProgressRecovered],
      ['stuck scheduled recovered', result.stuckScheduledRecovered],
      ['lost jobs re-enqueued', lostJobsReenqueued],
      ['wait timeouts fired', waitTimeoutsFired],
      ['signals expired', result.signalsExpired],
    ]);
    this.output.result(
      // All zeros then, and not because there was nothing to do.
      skipped ? `Skipped: another process holds the housekeeping lock.\n${fields}` : fields,
      { ...result, lostJobsReenqueued, waitTimeoutsFired, skipped },
    );
    return CliExitCode.done;
  }
}
