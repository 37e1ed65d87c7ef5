import { Command } from 'nest-commander';
import { WorkflowVerbCommand } from './workflow-verb.command';

/** `geneva-drive pause <id…>`. */
@Command({
  name: 'pause',
  arguments: '<ids...>',
  description: 'Pause workflows (a performing one at the step boundary)',
})
export class PauseCommand extends WorkflowVerbCommand {
  protected readonly verb = 'pause';
}
