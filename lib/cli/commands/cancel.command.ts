import { Command } from 'nest-commander';
import { WorkflowVerbCommand } from './workflow-verb.command';

/** `geneva-drive cancel <id…>`. */
@Command({
  name: 'cancel',
  arguments: '<ids...>',
  description: 'Cancel workflows (a performing one at the step boundary)',
})
export class CancelCommand extends WorkflowVerbCommand {
  protected readonly verb = 'cancel';
}
