import { Injectable, Logger, type LoggerService } from '@nestjs/common';
import { ErrorReportingService } from '../observability/error-reporting.service';
import { InjectResolvedOptions } from '../options/resolved-options.token';
import type { ResolvedGenevaDriveOptions } from '../options/resolved-options.interface';

/**
 * Whether the transport is down, so an outage is told once rather than once per job or per
 * reconnect attempt (SPEC §16.5): logged with the address and sent to `errorReporter` when it
 * starts, logged again when an enqueue gets through.
 */
@Injectable()
export class TransportOutage {
  private readonly defaultLogger = new Logger('GenevaDrive');
  private down = false;

  constructor(
    private readonly errors: ErrorReportingService,
    @InjectResolvedOptions() private readonly options: ResolvedGenevaDriveOptions,
  ) {}

  get ongoing(): boolean {
    return this.down;
  }

  private get logger(): LoggerService {
    return this.options.logger ?? this.defaultLogger;
  }

  /** The transport failed to answer (an error event, an enqueue that did not finish in time). */
  async failed(cause: unknown): Promise<void> {
    if (this.down) return;
    this.down = true;
    const reason = cause instanceof Error ? cause.message : String(cause);
    const error = new Error(
      `The step-job transport (${describeTransport(this.options)}) is unreachable: ${reason}. ` +
        'start() and signal() still commit; their jobs are enqueued once it answers again, and ' +
        "housekeeping's reconciliation enqueues any that were lost.",
    );
    error.name = 'TransportUnavailableError';
    this.logger.error(error.message);
    await this.errors.report(error, {
      workflowId: '',
      workflowClass: '',
      stepExecutionId: '',
      stepName: null,
      heroType: null,
      heroId: null,
    });
  }

  /** An enqueue got through. */
  recovered(): void {
    if (!this.down) return;
    this.down = false;
    this.logger.log(`The step-job transport (${describeTransport(this.options)}) answers again.`);
  }
}

/** The transport and where it points, without credentials: `Redis at 127.0.0.1:6379`. */
export function describeTransport(
  options: Pick<ResolvedGenevaDriveOptions, 'transport' | 'connection'>,
): string {
  if (options.transport !== 'postgres') return `Redis at ${describeConnection(options.connection)}`;
  const given = options.connection as {
    host?: unknown;
    port?: unknown;
    connectionString?: unknown;
  };
  if (typeof given.connectionString === 'string') {
    try {
      return `BullMQ on PostgreSQL at ${new URL(given.connectionString).host}`;
    } catch {
      return 'BullMQ on PostgreSQL at the configured connectionString';
    }
  }
  if (typeof given.host === 'string')
    return `BullMQ on PostgreSQL at ${given.host}:${typeof given.port === 'number' ? given.port : 5432}`;
  return "BullMQ on PostgreSQL in the data source's database";
}

/** Where the connection points, without credentials: `host:port`, a URL's host, or cluster nodes. */
export function describeConnection(connection: unknown): string {
  if (connection === null || typeof connection !== 'object') return 'an unknown address';
  const given = connection as {
    host?: unknown;
    port?: unknown;
    url?: unknown;
    path?: unknown;
    isCluster?: unknown;
    startupNodes?: unknown;
    sentinels?: unknown;
    name?: unknown;
  };
  // An ioredis client given as the connection keeps its options there.
  const clientOptions = (connection as { options?: unknown }).options;
  if (
    given.host === undefined &&
    clientOptions &&
    typeof clientOptions === 'object' &&
    given.isCluster !== true
  ) {
    return describeConnection(clientOptions);
  }
  if (given.isCluster === true && Array.isArray(given.startupNodes)) {
    return `cluster ${given.startupNodes.map((node) => describeConnection(node)).join(', ')}`;
  }
  if (Array.isArray(given.sentinels) && typeof given.name === 'string') {
    return `sentinel master '${given.name}'`;
  }
  if (typeof given.url === 'string') {
    try {
      return new URL(given.url).host;
    } catch {
      return 'the configured url';
    }
  }
  if (typeof given.path === 'string') return given.path;
  const host = typeof given.host === 'string' ? given.host : '127.0.0.1';
  const port = typeof given.port === 'number' || typeof given.port === 'string' ? given.port : 6379;
  return `${host}:${port}`;
}
