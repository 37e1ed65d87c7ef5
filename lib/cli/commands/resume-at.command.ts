import { Command } from 'nest-commander';
import { CliExitCode } from '../cli-exit-code';
import { expectArguments } from '../command-arguments';
import { GenevaDriveCommand } from './geneva-drive.command';

/** `geneva-drive resume-at <id> <step>`: resumes a paused workflow at the given step. */
@Command({
  name: 'resume-at',
  arguments: '<id> <step>',
  description: 'Resume a paused workflow at the given step',
})
export class ResumeAtCommand extends GenevaDriveCommand {
  protected async execute(params: string[]): Promise<CliExitCode> {
    expectArguments(params, 'a workflow id and a step name', 2);
    const [id, step] = params;
    const { workflows } = await this.host.services();
    const execution = await workflows.resumeAt(id, step);
    this.output.result(
      `Resumed workflow ${id} at step '${step}' (execution ${execution.id}, scheduled for ${execution.scheduledFor.toISOString()}).`,
      { execution },
    );
    return CliExitCode.done;
  }
}
