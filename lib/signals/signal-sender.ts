import { Injectable } from '@nestjs/common';
import {
  LOCK_CONFLICT_RETRY_DELAYS_MS,
  retryLockConflicts,
} from '../common/transient-database-error';
import { describeValue, jsonDataProblem, storedStringProblem } from '../common/input-guards';
import { isUuid } from '../common/uuid';
import { WorkflowRegistry } from '../discovery/workflow.registry';
import type { SignalEntity } from '../entities/signal.entity';
import { InvalidArgumentError } from '../errors/invalid-argument.error';
import { MissingMigrationError } from '../errors/missing-migration.error';
import { SignalPayloadTooLargeError } from '../errors/signal-payload-too-large.error';
import { workflowNotFound } from '../common/workflow-like';
import { WorkflowNotOngoingError } from '../errors/workflow-not-ongoing.error';
import type { SignalOptions } from '../interfaces/workflow-service.interface';
import { InjectResolvedOptions } from '../options/resolved-options.token';
import type { ResolvedGenevaDriveOptions } from '../options/resolved-options.interface';
import { SignalRendezvous } from './signal-rendezvous';
import {
  WorkflowRepository,
  type AtOnceSignalOutcome,
  type NewSignal,
  type RepositoryTransaction,
} from '../ports/workflow.repository';
import { WorkflowScheduler } from '../scheduling/workflow-scheduler';
import type { WorkflowEntity } from '../entities/workflow.entity';
import { signalWakeTargets } from './signal-wake-targets';
import { WakeSnapshots } from './wake-snapshots';

const SIGNAL_OPTION_KEYS = ['payload', 'idempotencyKey', 'manager'];

/** The refusal of a delivery to a finished or canceled workflow (both ways of delivering). */
function notOngoing(workflow: WorkflowEntity, name: string): WorkflowNotOngoingError {
  return new WorkflowNotOngoingError(
    `Cannot deliver signal "${name}" to a ${workflow.state} workflow (${workflow.type} ${workflow.id}).`,
  );
}

/**
 * Delivers a signal: validation first (nothing written on bad input), then one transaction under
 * the workflow row lock that dedupes, buffers (paused workflow) or wakes parked executions. Jobs
 * of woken executions are handed to the transport after commit, not waited for (the rows are the
 * obligation; see `enqueueInBackground`). Where the adapter can (PostgreSQL, no caller's
 * transaction) the delivery decides itself in one round trip (`deliverSignalAtOnce`): the
 * matchers that names alone decide are sorted out beforehand (`signalWakeTargets`). When the
 * workflow has a step parked whose matcher must run, that attempt writes nothing and the delivery
 * runs here under the lock: the lock with every read it decides on, then the writes with the
 * COMMIT (plus the hero's read when a matcher may use it).
 */
@Injectable()
export class SignalSender {
  constructor(
    private readonly registry: WorkflowRegistry,
    private readonly repository: WorkflowRepository,
    private readonly rendezvous: SignalRendezvous,
    private readonly scheduler: WorkflowScheduler,
    private readonly snapshots: WakeSnapshots,
    @InjectResolvedOptions() private readonly options: ResolvedGenevaDriveOptions,
  ) {}

  async send(workflowId: string, name: string, opts: SignalOptions = {}): Promise<SignalEntity> {
    const { payload, idempotencyKey } = this.validate(name, opts);
    await this.requireSignalsMigration();
    if (!isUuid(workflowId)) throw workflowNotFound(workflowId);
    const delivery = { workflowId, name, idempotencyKey, payload };
    const inTransaction = <T>(work: (uow: RepositoryTransaction) => Promise<T>) =>
      this.repository.transaction(work, {
        caller: opts.manager,
        hotPath: true,
        enqueueInBackground: true,
      });
    const run = async () => {
      const delivered = await inTransaction(async (uow) => {
        const outcome = await this.repository.deliverSignalAtOnce(uow, {
          ...delivery,
          ...signalWakeTargets(this.registry.all(), name),
        });
        return outcome
          ? this.settledAtOnce(uow, outcome, delivery)
          : this.deliverUnderLock(uow, delivery);
      });
      // A parked step's matcher must run: the at-once attempt wrote nothing; decide under the lock.
      return delivered ?? inTransaction((uow) => this.deliverUnderLock(uow, delivery));
    };
    // Lost to a concurrent writer of the same rows (a wait timeout firing, on MariaDB a step of
    // another workflow beside it in an index): rolled back, so delivering again stores one signal.
    return opts.manager ? run() : retryLockConflicts(run, LOCK_CONFLICT_RETRY_DELAYS_MS);
  }

  /**
   * What a delivery that decided itself (`deliverSignalAtOnce`, committed) comes to: its error, its
   * signal, the jobs of what it woke. Null when a matcher must run after all.
   */
  private async settledAtOnce(
    uow: RepositoryTransaction,
    outcome: AtOnceSignalOutcome,
    delivery: NewSignal,
  ): Promise<SignalEntity | null> {
    switch (outcome.kind) {
      case 'missing':
        throw workflowNotFound(delivery.workflowId);
      case 'not-ongoing':
        throw notOngoing(outcome.workflow, delivery.name);
      case 'duplicate':
        return outcome.signal;
      case 'undecided':
        return null;
      case 'delivered': {
        const definition = this.registry.findByName(outcome.workflow.type);
        if (definition)
          for (const execution of outcome.woken) {
            // Committed: a job of it run by this process may start from these rows.
            if (execution.row)
              this.snapshots.remember({
                workflow: outcome.workflow,
                execution: execution.row,
                signal: outcome.signal,
              });
            await this.scheduler.enqueueWoken(uow, outcome.workflow, definition, execution);
          }
        return outcome.signal;
      }
    }
  }

  /**
   * The delivery decided here: the workflow locked with what the decision reads, then the signal
   * inserted, and the parked executions whose matcher accepts it woken.
   */
  private async deliverUnderLock(
    uow: RepositoryTransaction,
    delivery: NewSignal,
  ): Promise<SignalEntity> {
    const { workflowId, name, idempotencyKey } = delivery;
    const { workflow, duplicate, waiting } = await this.repository.lockForSignal(
      uow,
      workflowId,
      name,
      idempotencyKey,
    );
    if (!workflow) throw workflowNotFound(workflowId);
    if (duplicate) {
      duplicate.duplicateDelivery = true;
      return duplicate;
    }
    if (workflow.state === 'finished' || workflow.state === 'canceled')
      throw notOngoing(workflow, name);
    const signal = await this.repository.insertSignal(uow, delivery);
    if (signal.duplicateDelivery || workflow.state === 'paused' || waiting.length === 0)
      return signal;
    const definition = this.registry.findByName(workflow.type);
    if (!definition) return signal;
    await this.rendezvous.wakeMatching(uow, workflow, definition, signal, waiting, async () => ({
      workflow,
      hero:
        workflow.heroType && workflow.heroId
          ? await this.repository.loadHero(uow, workflow.heroType, workflow.heroId)
          : null,
    }));
    return signal;
  }

  /** Signals need their table; the check is cached and repeated only while it fails. */
  async requireSignalsMigration(): Promise<void> {
    if (this.repository.features.signals || (await this.repository.refreshSchemaFeatures()).signals)
      return;
    throw new MissingMigrationError(
      'Signals need the signals migration, which has not run: add GENEVA_DRIVE_MIGRATIONS to your DataSource migrations and run them.',
    );
  }

  /**
   * Argument checks, before anything is written: option keys; the name and idempotency key must be
   * storable verbatim in their text columns (non-blank name, no NUL, no lone surrogate, at most 255
   * characters); the payload must be JSON data (see `jsonDataProblem`) within maxSignalPayloadSize.
   */
  private validate(
    name: string,
    opts: SignalOptions,
  ): { payload: unknown; idempotencyKey: string | null } {
    if (opts === null || typeof opts !== 'object' || Array.isArray(opts)) {
      throw new InvalidArgumentError(
        `signal() expects an options object: { payload?, idempotencyKey?, manager? }, but got ${describeValue(opts)}.`,
      );
    }
    const unknown = Object.keys(opts).filter((key) => !SIGNAL_OPTION_KEYS.includes(key));
    if (unknown.length > 0) {
      throw new InvalidArgumentError(
        `signal() got unknown option(s) ${unknown.join(', ')}. Allowed: ${SIGNAL_OPTION_KEYS.join(', ')}.`,
      );
    }
    if (typeof name !== 'string' || name.trim() === '') {
      throw new InvalidArgumentError(
        `signal() needs a non-blank signal name, e.g. signal(workflow, 'payment_confirmed'), but got ${describeValue(name)}.`,
      );
    }
    const nameProblem = storedStringProblem(name);
    if (nameProblem) throw new InvalidArgumentError(`signal() name ${nameProblem}.`);
    const { idempotencyKey } = opts;
    if (idempotencyKey !== undefined) {
      const keyProblem =
        idempotencyKey === ''
          ? "must be a non-empty string, but was ''"
          : storedStringProblem(idempotencyKey, { allowBlank: true });
      if (keyProblem) throw new InvalidArgumentError(`signal() idempotencyKey ${keyProblem}.`);
    }
    const payloadProblem =
      opts.payload === undefined ? null : jsonDataProblem(opts.payload, 'payload');
    if (payloadProblem) {
      throw new InvalidArgumentError(`signal() ${payloadProblem}. Payloads are stored as JSON.`);
    }
    const json = opts.payload === undefined ? null : JSON.stringify(opts.payload);
    const limit = this.options.maxSignalPayloadSize;
    if (json !== null && limit !== null && Buffer.byteLength(json, 'utf8') > limit) {
      throw new SignalPayloadTooLargeError(
        `Signal "${name}" payload is ${Buffer.byteLength(json, 'utf8')} bytes of JSON, over maxSignalPayloadSize (${limit}). ` +
          'Send a reference (an id) instead of the data, or raise maxSignalPayloadSize.',
      );
    }
    return {
      payload: json === null || json === undefined ? null : (JSON.parse(json) as unknown),
      idempotencyKey: idempotencyKey ?? null,
    };
  }
}
