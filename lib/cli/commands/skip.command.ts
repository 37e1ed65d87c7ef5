import { Command } from 'nest-commander';
import { WorkflowVerbCommand } from './workflow-verb.command';

/** `geneva-drive skip <id…>`. */
@Command({ name: 'skip', arguments: '<ids...>', description: 'Skip the current step of workflows' })
export class SkipCommand extends WorkflowVerbCommand {
  protected readonly verb = 'skip';
}
