import { Command } from 'nest-commander';
import { CliExitCode } from '../cli-exit-code';
import { expectArguments } from '../command-arguments';
import { formatFields } from '../text-table';
import { GenevaDriveCommand } from './geneva-drive.command';

/** `geneva-drive housekeeping`: one housekeeping pass (HousekeepingService.run()). */
@Command({
  name: 'housekeeping',
  description: 'Run one housekeeping pass and print what it did',
})
export class HousekeepingCommand extends GenevaDriveCommand {
  protected async execute(params: string[]): Promise<CliExitCode> {
    expectArguments(params, 'no arguments', 0);
    const { housekeeping } = await this.host.services();
    const result = await housekeeping.run();
    this.output.result(
      formatFields([
        ['workflows cleaned up', result.workflowsCleanedUp],
        ['step executions cleaned up', result.stepExecutionsCleanedUp],
        ['signals cleaned up', result.signalsCleanedUp],
        ['stuck in_progress recovered', result.stuckInProgressRecovered],
        ['stuck scheduled recovered', result.stuckScheduledRecovered],
        ['signals expired', result.signalsExpired],
      ]),
      result,
    );
    return CliExitCode.done;
  }
}
