import { Command, Option } from 'nest-commander';
import { CliExitCode } from '../cli-exit-code';
import {
  DEFAULT_LIST_LIMIT,
  MAX_LIST_LIMIT,
  expectArguments,
  parseListOptions,
  type ListOptions,
} from '../command-arguments';
import { workflowsTable } from '../entity-format';
import { GenevaDriveCommand } from './geneva-drive.command';

/** `geneva-drive list`: workflows, newest first. */
@Command({ name: 'list', description: 'List workflows, newest first' })
export class ListCommand extends GenevaDriveCommand {
  protected async execute(params: string[], options: ListOptions): Promise<CliExitCode> {
    expectArguments(params, 'no arguments (filters are options: --state, --class …)', 0);
    const query = parseListOptions(options);
    const { repository } = await this.host.services();
    const workflows = await repository.listWorkflows(query);
    this.output.result(workflowsTable(workflows), { workflows });
    return CliExitCode.done;
  }

  @Option({ flags: '--state <states>', description: 'only these states (comma-separated)' })
  parseState(value: string): string {
    return value;
  }

  @Option({
    flags: '--class <name>',
    description: 'only this workflow class (its registered name)',
  })
  parseClass(value: string): string {
    return value;
  }

  @Option({
    flags: '--hero-type <type>',
    description: 'only workflows of this hero (with --hero-id)',
  })
  parseHeroType(value: string): string {
    return value;
  }

  @Option({
    flags: '--hero-id <id>',
    description: 'only workflows of this hero (with --hero-type)',
  })
  parseHeroId(value: string): string {
    return value;
  }

  @Option({
    flags: '--limit <count>',
    description: `at most this many rows (default ${DEFAULT_LIST_LIMIT}, at most ${MAX_LIST_LIMIT})`,
  })
  parseLimit(value: string): string {
    return value;
  }
}
