import { Command } from 'nest-commander';
import { workflowNotFound } from '../../common/workflow-like';
import { MissingMigrationError } from '../../errors/missing-migration.error';
import type { SignalEntity } from '../../entities/signal.entity';
import { CliExitCode } from '../cli-exit-code';
import { expectArguments } from '../command-arguments';
import { executionsTable, signalsTable, workflowFields } from '../entity-format';
import { GenevaDriveCommand } from './geneva-drive.command';

/** `geneva-drive show <id>`: the workflow, its step executions and its signals. */
@Command({
  name: 'show',
  arguments: '<id>',
  description: 'Show a workflow, its executions and signals',
})
export class ShowCommand extends GenevaDriveCommand {
  protected async execute(params: string[]): Promise<CliExitCode> {
    expectArguments(params, 'a workflow id', 1);
    const { workflows } = await this.host.services();
    const workflow = await workflows.find(params[0]);
    if (!workflow) throw workflowNotFound(params[0]);
    const executions = await workflows.executionHistory(workflow);
    let signals: SignalEntity[] = [];
    try {
      signals = await workflows.signals(workflow);
    } catch (error) {
      // Before the signals migration there are none to show.
      if (!(error instanceof MissingMigrationError)) throw error;
    }
    this.output.result(
      [
        workflowFields(workflow),
        '',
        'Executions',
        executionsTable(executions),
        '',
        'Signals',
        signalsTable(signals),
      ].join('\n'),
      { workflow, executions, signals },
    );
    return CliExitCode.done;
  }
}
