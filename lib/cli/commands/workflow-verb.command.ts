import type { WorkflowEntity } from '../../entities/workflow.entity';
import type { WorkflowService } from '../../service/workflow.service';
import { CliExitCode } from '../cli-exit-code';
import { CliUsageError } from '../cli-usage.error';
import { exitCodeOf } from '../exit-code-of';
import { formatTable } from '../text-table';
import { GenevaDriveCommand } from './geneva-drive.command';

/** One id's result of `pause`, `resume`, `skip` or `cancel`. */
export interface VerbResult {
  id: string;
  ok: boolean;
  /** The workflow's state afterwards (when done). */
  state?: string;
  /** Why it was refused (when not). */
  error?: { name: string; message: string };
}

/**
 * `pause|resume|skip|cancel <id…>`: the verb on each id in turn, each on its own (one refused id
 * does not stop the others). Exit code 0 when every id was done, else that of the first refusal.
 */
export abstract class WorkflowVerbCommand extends GenevaDriveCommand {
  protected abstract readonly verb: 'pause' | 'resume' | 'skip' | 'cancel';

  protected async execute(params: string[]): Promise<CliExitCode> {
    if (params.length === 0)
      throw new CliUsageError(`${this.verb} needs at least one workflow id.`);
    const { workflows } = await this.host.services();
    const results: VerbResult[] = [];
    let exitCode: CliExitCode = CliExitCode.done;
    for (const id of params) {
      try {
        const workflow = await this.apply(workflows, id);
        results.push({ id, ok: true, state: workflow.state });
      } catch (error) {
        const code = exitCodeOf(error);
        // A lost connection is not one id's problem: stop.
        if (code === CliExitCode.cannotConnect) throw error;
        if (exitCode === CliExitCode.done) exitCode = code;
        const { name, message } = error instanceof Error ? error : new Error(String(error));
        results.push({ id, ok: false, error: { name, message } });
      }
    }
    this.output.result(
      formatTable(
        ['ID', 'RESULT'],
        results.map((result) => [
          result.id,
          result.ok ? `${this.verb}: ${result.state}` : `refused: ${result.error!.message}`,
        ]),
      ),
      { results },
    );
    return exitCode;
  }

  private apply(workflows: WorkflowService, id: string): Promise<WorkflowEntity> {
    switch (this.verb) {
      case 'pause':
        return workflows.pause(id);
      case 'resume':
        return workflows.resume(id);
      case 'skip':
        return workflows.skip(id);
      case 'cancel':
        return workflows.cancel(id);
    }
  }
}
