import diagnosticsChannel from 'node:diagnostics_channel';
import { WorkerHost } from '@nestjs/bullmq';
import type { INestApplication } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import type { Job } from 'bullmq';
import type { DataSource, EntityTarget, ObjectLiteral } from 'typeorm';
import {
  GENEVA_DRIVE_DIAGNOSTICS_CHANNELS,
  type ErrorReportContext,
  type GenevaDriveDiagnosticsEvent,
  type WorkflowState,
} from '../../../lib';

// ───────────────────────────── Session settings ─────────────────────────────

/** A PostgreSQL session setting the suite runs under, applied to every pooled connection. */
export interface SessionSetting {
  readonly label: string;
  /** `-c name=value` switches for node-postgres' `options` startup parameter. */
  readonly options?: string;
  /** `client_encoding` to SET on each new connection (see `postgresExtra`). */
  readonly clientEncoding?: string;
  /**
   * The session cannot carry every Unicode value: node-postgres sends and decodes UTF-8 whatever
   * the server thinks, so only ASCII is guaranteed byte-exact; other values may also fail with an
   * encoding error instead (and must then write nothing).
   */
  readonly lossy: boolean;
  /** What `SHOW <name>` answers on the app's connections once the setting is in force. */
  readonly expected: Readonly<Record<string, string>>;
}

export const DEFAULT_SETTING: SessionSetting = {
  label: 'default session settings',
  lossy: false,
  expected: {},
};

export const POSTGRES_SETTINGS: readonly SessionSetting[] = [
  {
    ...DEFAULT_SETTING,
    expected: {
      standard_conforming_strings: 'on',
      client_encoding: 'UTF8',
      backslash_quote: 'safe_encoding',
    },
  },
  {
    label: 'standard_conforming_strings = off',
    options: '-c standard_conforming_strings=off -c escape_string_warning=off',
    lossy: false,
    expected: { standard_conforming_strings: 'off' },
  },
  {
    label: 'client_encoding = SJIS, backslash_quote = on',
    options: '-c backslash_quote=on',
    clientEncoding: 'SJIS',
    lossy: true,
    expected: { client_encoding: 'SJIS', backslash_quote: 'on' },
  },
];

/** A node-postgres client, as pg-pool's `onConnect` hook hands it over. */
interface PgClientLike {
  query(sql: string): Promise<unknown>;
}

/**
 * The DataSource `extra` (node-postgres pool options) that puts every pooled connection under
 * `setting`, with `search_path` on the test schema so that an injected `DROP TABLE canary` would
 * find the canary. `-c` switches travel in the startup packet's `options`; `client_encoding` cannot:
 * node-postgres always adds `client_encoding=UTF8` to the startup packet, which PostgreSQL applies
 * after the `options` switches. So it is SET in pg-pool's `onConnect` hook, which the pool awaits
 * before it hands a new connection to anyone (TypeORM passes `extra` to the pool).
 */
export function postgresExtra(setting: SessionSetting, schema: string): Record<string, unknown> {
  const extra: Record<string, unknown> = {
    options: [`-c search_path=${schema}`, setting.options].filter(Boolean).join(' '),
  };
  if (setting.clientEncoding) {
    const statement = `SET client_encoding = '${setting.clientEncoding}'`;
    extra.onConnect = (client: PgClientLike) => client.query(statement);
  }
  return extra;
}

/**
 * What PostgreSQL answers when a value cannot travel in the session's client encoding: the bytes
 * are no valid SJIS, have no UTF-8 equivalent, or, decoded as SJIS (where 0x81 0x5C is one
 * character, so a backslash is swallowed), no longer form valid JSON. Each refuses the whole
 * statement: nothing is written. A syntax error or a wrong parameter count is not among them:
 * that is a value that escaped its literal.
 */
export const ENCODING_FAILURE =
  /invalid byte sequence for encoding|has no equivalent in encoding|invalid input syntax for type json/;

export function isAscii(value: string): boolean {
  for (let index = 0; index < value.length; index++)
    if (value.charCodeAt(index) > 0x7f) return false;
  return true;
}

/** An error that says the client encoding cannot carry a value (and nothing else went wrong). */
export function isEncodingError(error: unknown): boolean {
  return error instanceof Error && ENCODING_FAILURE.test(error.message);
}

// ───────────────────────────── Waiting for runs ─────────────────────────────

type Observation =
  | {
      kind: 'finalize';
      workflowId: string;
      executionId: string;
      stepName: string;
      workflowState?: WorkflowState;
    }
  | { kind: 'report'; workflowId: string; executionId: string | null; error: Error }
  | { kind: 'jobFailed'; workflowId: string | null; error: Error }
  | { kind: 'jobCompleted'; workflowId: string | null }
  /** The workflow's state read once the job at log position `after` completed. */
  | { kind: 'state'; workflowId: string; after: number; state: WorkflowState | null };

/** Reads a workflow's state (WorkflowService.find). */
export type StateReader = (workflowId: string) => Promise<WorkflowState | null>;

/** How a run came to rest. */
export type Settlement =
  /** A step was finalized and left the workflow in `state`. */
  | { kind: 'settled'; state: WorkflowState }
  /** An error was reported for an execution that was never finalized (a prepare-phase failure). */
  | { kind: 'prepareFailed'; error: Error }
  /** A job failed with an error nobody reported: a write of the runner failed (nothing was finalized). */
  | { kind: 'jobFailed'; error: Error };

/**
 * Knows how each run ends, from what the library publishes: `geneva-drive:finalize` events, the
 * `errorReporter` (pass `observer.errorReporter` in the module options), and the BullMQ workers'
 * events: `failed` (a job whose runner transaction failed: its error is the one nobody reported)
 * and `completed` (after which the workflow's state is read once: a prepare phase that cancels a
 * workflow whose hero is gone publishes nothing else). Tests take a `mark()` before acting and
 * wait with `settled()` for what happened after it.
 */
export class RunObserver {
  private readonly log: Observation[] = [];
  private readonly finalized = new Set<string>();
  private readonly reported = new WeakSet<Error>();
  private readonly wakeUps = new Set<() => void>();

  private readonly onFinalize = (message: unknown): void => {
    const event = message as GenevaDriveDiagnosticsEvent;
    this.finalized.add(event.executionId);
    this.push({
      kind: 'finalize',
      workflowId: event.workflowId,
      executionId: event.executionId,
      stepName: event.stepName,
      workflowState: event.workflowState,
    });
  };

  readonly errorReporter = (error: Error, context: ErrorReportContext): void => {
    this.reported.add(error);
    this.push({
      kind: 'report',
      workflowId: context.workflowId,
      executionId: context.stepExecutionId,
      error,
    });
  };

  constructor() {
    diagnosticsChannel.subscribe(GENEVA_DRIVE_DIAGNOSTICS_CHANNELS.finalize, this.onFinalize);
  }

  /** Listens to the `failed` and `completed` events of every BullMQ worker of the app. */
  watchWorkers(app: INestApplication, readState: StateReader): void {
    let watched = 0;
    for (const wrapper of app.get(DiscoveryService).getProviders()) {
      const instance: unknown = wrapper.instance;
      if (!(instance instanceof WorkerHost)) continue;
      instance.worker.on('failed', (job: Job | undefined, error: Error) => {
        this.push({ kind: 'jobFailed', workflowId: workflowIdOf(job), error });
      });
      instance.worker.on('completed', (job: Job) => {
        const workflowId = workflowIdOf(job);
        const after = this.log.length;
        this.push({ kind: 'jobCompleted', workflowId });
        if (workflowId === null) return;
        readState(workflowId).then(
          (state) => this.push({ kind: 'state', workflowId, after, state }),
          () => this.push({ kind: 'state', workflowId, after, state: null }),
        );
      });
      watched += 1;
    }
    if (watched === 0) throw new Error('RunObserver found no BullMQ worker to watch');
  }

  /** The position to wait from: take it before the call that starts the run. */
  mark(): number {
    return this.log.length;
  }

  /**
   * Resolves once, after `since`, the workflow reached one of `states` at a finalize, or failed
   * in a way no finalize will follow. The timeout only turns a hang into a readable failure.
   */
  settled(
    workflowId: string,
    states: readonly WorkflowState[],
    since: number,
    timeoutMs = 10_000,
  ): Promise<Settlement> {
    return new Promise<Settlement>((resolve, reject) => {
      const check = () => {
        const found = this.find(workflowId, states, since);
        if (!found) return;
        cleanup();
        resolve(found);
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(
          new Error(
            `Workflow ${workflowId} did not reach ${states.join('/')} within ${timeoutMs} ms; ` +
              `seen: ${this.describe(workflowId)}`,
          ),
        );
      }, timeoutMs);
      const cleanup = () => {
        clearTimeout(timer);
        this.wakeUps.delete(check);
      };
      this.wakeUps.add(check);
      check();
    });
  }

  close(): void {
    diagnosticsChannel.unsubscribe(GENEVA_DRIVE_DIAGNOSTICS_CHANNELS.finalize, this.onFinalize);
    this.wakeUps.clear();
  }

  private push(observation: Observation): void {
    this.log.push(observation);
    for (const wakeUp of [...this.wakeUps]) wakeUp();
  }

  private find(
    workflowId: string,
    states: readonly WorkflowState[],
    since: number,
  ): Settlement | null {
    for (let index = since; index < this.log.length; index++) {
      const observation = this.log[index];
      if (observation.workflowId !== workflowId) continue;
      if (observation.kind === 'finalize') {
        if (observation.workflowState && states.includes(observation.workflowState))
          return { kind: 'settled', state: observation.workflowState };
      } else if (observation.kind === 'report') {
        if (observation.executionId === null || !this.finalized.has(observation.executionId))
          return { kind: 'prepareFailed', error: observation.error };
      } else if (observation.kind === 'jobFailed') {
        if (!this.reported.has(observation.error))
          return { kind: 'jobFailed', error: observation.error };
      } else if (observation.kind === 'state') {
        // Read after a job of this run completed (not one that completed before the mark).
        if (observation.after >= since && observation.state && states.includes(observation.state))
          return { kind: 'settled', state: observation.state };
      }
    }
    return null;
  }

  private describe(workflowId: string): string {
    const mine = this.log.filter((observation) => observation.workflowId === workflowId);
    return (
      mine
        .map((observation) =>
          observation.kind === 'finalize'
            ? `finalize ${observation.stepName} → ${observation.workflowState}`
            : observation.kind === 'state'
              ? `state after a job: ${observation.state}`
              : observation.kind === 'jobCompleted'
                ? 'job completed'
                : `${observation.kind}: ${observation.error.message.slice(0, 200)}`,
        )
        .join('; ') || 'nothing'
    );
  }
}

function workflowIdOf(job: Job | undefined): string | null {
  const data = job?.data as { workflowId?: unknown } | undefined;
  return typeof data?.workflowId === 'string' ? data.workflowId : null;
}

// ───────────────────────────── Reading rows directly ─────────────────────────────

/** Columns to read: text columns as they are, JSON columns as their text, parsed here. */
export interface ColumnSelection {
  text?: readonly string[];
  json?: readonly string[];
}

/**
 * Reads the library's tables with parameterized SQL of its own, bypassing the library's read
 * path: JSON columns are selected as text and parsed here, so no driver decodes them.
 */
export class TableReader {
  constructor(private readonly dataSource: DataSource) {}

  private get family(): 'postgres' | 'mysql' | 'sqlite' {
    const { type } = this.dataSource.options;
    if (type === 'postgres') return 'postgres';
    return type === 'mariadb' || type === 'mysql' ? 'mysql' : 'sqlite';
  }

  async rows(
    entity: EntityTarget<ObjectLiteral>,
    columns: ColumnSelection,
    where: Readonly<Record<string, unknown>>,
  ): Promise<Array<Record<string, unknown>>> {
    const json = columns.json ?? [];
    const selected = [
      ...(columns.text ?? []).map((name) => `${this.name(name)} AS ${this.name(name)}`),
      ...json.map((name) => `${this.jsonText(name)} AS ${this.name(name)}`),
    ];
    const [condition, parameters] = this.where(where);
    const rows = await this.dataSource.query<Array<Record<string, unknown>>>(
      `SELECT ${selected.join(', ')} FROM ${this.table(entity)} WHERE ${condition} ` +
        `ORDER BY ${this.name('created_at')}, ${this.name('id')}`,
      parameters,
    );
    return rows.map((row) => {
      const parsed: Record<string, unknown> = { ...row };
      for (const name of json) {
        const text = row[name];
        parsed[name] = typeof text === 'string' ? (JSON.parse(text) as unknown) : text;
      }
      return parsed;
    });
  }

  async count(
    entity: EntityTarget<ObjectLiteral>,
    where: Readonly<Record<string, unknown>> = {},
  ): Promise<number> {
    const [condition, parameters] = this.where(where);
    const rows = await this.dataSource.query<Array<{ count: unknown }>>(
      `SELECT COUNT(*) AS ${this.name('count')} FROM ${this.table(entity)} WHERE ${condition}`,
      parameters,
    );
    return Number(rows[0].count);
  }

  private where(where: Readonly<Record<string, unknown>>): [string, unknown[]] {
    const entries = Object.entries(where);
    if (entries.length === 0) return ['1 = 1', []];
    const condition = entries
      .map(
        ([name], index) =>
          `${this.name(name)} = ${this.family === 'postgres' ? `$${index + 1}` : '?'}`,
      )
      .join(' AND ');
    return [condition, entries.map(([, value]) => value)];
  }

  private table(entity: EntityTarget<ObjectLiteral>): string {
    return this.dataSource
      .getMetadata(entity)
      .tablePath.split('.')
      .map((part) => this.name(part))
      .join('.');
  }

  private name(identifier: string): string {
    return this.dataSource.driver.escape(identifier);
  }

  private jsonText(column: string): string {
    const name = this.name(column);
    if (this.family === 'postgres') return `${name}::text`;
    return this.family === 'mysql' ? `CAST(${name} AS CHAR)` : name;
  }
}

// ───────────────────────────── The canary ─────────────────────────────

const CANARY_ROWS = [{ id: 1, note: 'intact' }];

/** A table every injected `DROP TABLE canary` / `INSERT` would hit: one row, `(1, 'intact')`. */
export async function createCanary(dataSource: DataSource): Promise<void> {
  await dataSource.query('CREATE TABLE canary (id integer PRIMARY KEY, note varchar(32) NOT NULL)');
  await dataSource.query("INSERT INTO canary (id, note) VALUES (1, 'intact')");
}

/** What is wrong with the canary, or null when it still holds exactly its row. */
export async function canaryProblem(dataSource: DataSource): Promise<string | null> {
  let rows: Array<{ id: unknown; note: unknown }>;
  try {
    rows = await dataSource.query('SELECT id, note FROM canary ORDER BY id');
  } catch (error) {
    return `the canary table is gone (${(error as Error).message})`;
  }
  const found = rows.map((row) => ({ id: Number(row.id), note: row.note }));
  return JSON.stringify(found) === JSON.stringify(CANARY_ROWS)
    ? null
    : `the canary table holds ${JSON.stringify(found)} instead of ${JSON.stringify(CANARY_ROWS)}`;
}

/** Puts the canary back as it was, so that later cases are judged on their own. */
export async function restoreCanary(dataSource: DataSource): Promise<void> {
  await dataSource.query('DROP TABLE IF EXISTS canary');
  await createCanary(dataSource);
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** `text` with U+FFFD in place of each lone surrogate (which is not Unicode). */
export function withoutLoneSurrogates(text: string): string {
  return text.replace(LONE_SURROGATE, '\uFFFD');
}

/**
 * `text` as a text column must keep it: U+FFFD in place of NUL (PostgreSQL text refuses NUL, so
 * the library replaces it) and in place of each lone surrogate (node-postgres and mysql2 encode
 * one as U+FFFD), the same on every database.
 */
export function asStoredText(text: string): string {
  return withoutLoneSurrogates(text.replaceAll('\u0000', '\uFFFD'));
}
