import { Command } from 'nest-commander';
import { WorkflowVerbCommand } from './workflow-verb.command';

/** `geneva-drive resume <id…>`. */
@Command({ name: 'resume', arguments: '<ids...>', description: 'Resume paused workflows' })
export class ResumeCommand extends WorkflowVerbCommand {
  protected readonly verb = 'resume';
}
