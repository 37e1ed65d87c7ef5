import { Command, Option } from 'nest-commander';
import { CliExitCode } from '../cli-exit-code';
import { expectArguments, parsePayload } from '../command-arguments';
import { GenevaDriveCommand } from './geneva-drive.command';

interface SignalCommandOptions {
  payload?: string;
  key?: string;
}

/** `geneva-drive signal <id> <name> [--payload JSON] [--key K]`: delivers a signal. */
@Command({
  name: 'signal',
  arguments: '<id> <name>',
  description: 'Deliver a signal to a workflow',
})
export class SignalCommand extends GenevaDriveCommand {
  protected async execute(params: string[], options: SignalCommandOptions): Promise<CliExitCode> {
    expectArguments(params, 'a workflow id and a signal name', 2);
    const [id, name] = params;
    const payload = parsePayload(options.payload);
    const { workflows } = await this.host.services();
    const signal = await workflows.signal(id, name, {
      ...(payload === undefined ? {} : { payload }),
      ...(options.key === undefined ? {} : { idempotencyKey: options.key }),
    });
    const human = signal.duplicateDelivery
      ? `Signal '${name}' with key '${options.key}' was delivered before (signal ${signal.id}); nothing new was delivered.`
      : `Delivered signal '${name}' to workflow ${id} (signal ${signal.id}).`;
    this.output.result(human, { signal });
    return CliExitCode.done;
  }

  @Option({ flags: '--payload <json>', description: 'the payload, as JSON' })
  parsePayload(value: string): string {
    return value;
  }

  @Option({
    flags: '--key <key>',
    description: 'idempotency key: a second delivery with it is a no-op',
  })
  parseKey(value: string): string {
    return value;
  }
}
