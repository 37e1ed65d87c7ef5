import type { MigrationInterface, QueryRunner } from 'typeorm';
import { quoteIdentifier, quoteTable } from '../adapters/sql-identifiers';
import { createStepFilterIndexSql } from './dashboard-search-indexes.migration';
import { createIndexSql, dropIndexSql, postgresTable } from './postgres-indexes';
import { INDEX_NAMES, STEP_EXECUTIONS_TABLE, WORKFLOWS_TABLE } from './migration.constants';

/** Free space left in each new page of the workflows table, in percent. */
export const WORKFLOWS_FILLFACTOR = 85;

/**
 * Workflow indexes whose every lookup another index serves as well: `(state)` leads
 * `(state, created_at, id)`, and `(hero_id)` finds a hero's workflows (a hero id matches few
 * rows). Each cost an entry at every INSERT and at every UPDATE that changes the state.
 */
const REDUNDANT_WORKFLOW_INDEXES = [
  { index: INDEX_NAMES.workflowsState, columns: ['state'] },
  { index: INDEX_NAMES.workflowsHero, columns: ['hero_type', 'hero_id'] },
] as const;

/**
 * Step-execution indexes that become partial: each keeps its name and columns, and holds only the
 * rows its lookups ask for (`where`), which every lookup's condition implies.
 */
const NARROWED_EXECUTION_INDEXES = [
  {
    index: INDEX_NAMES.stepExecutionsContinuesFrom,
    columns: ['continues_from_id'],
    where: `${quoteIdentifier('continues_from_id')} IS NOT NULL`,
  },
  {
    index: INDEX_NAMES.stepExecutionsSignal,
    columns: ['signal_id'],
    where: `${quoteIdentifier('signal_id')} IS NOT NULL`,
  },
  {
    index: INDEX_NAMES.stepExecutionsScheduled,
    columns: ['state', 'scheduled_for'],
    where: `${quoteIdentifier('state')} = 'scheduled'`,
  },
] as const;

/**
 * PostgreSQL only: fewer index entries written per step. Every step updates its workflow row and
 * one step execution row and inserts the next execution; an UPDATE that changes an indexed column
 * writes an entry into every index of its table, and an INSERT into every index whose predicate
 * the row meets.
 * - The workflow row is updated in place ("HOT": no index entry at all) when no indexed column
 *   changes and its page has room. The dashboard's step-filter index `(COALESCE(current_step_name,
 *   next_step_name), created_at, id)` changed at every step, so it goes (the step filter reads the
 *   newest-first list until its page is full, as on MariaDB, MySQL and SQLite; README "The step
 *   filter and PostgreSQL's in-place updates"), and new pages of the table keep 15% free. Two
 *   workflow indexes other indexes stand in for go too.
 * - Three step-execution indexes become partial, so a step's INSERT of the next execution
 *   (`in_progress`) and its UPDATE finishing the current one write no entry into them: those on
 *   `continues_from_id` and `signal_id` (`IS NOT NULL`: null on every execution but a resumable
 *   step's continuation and a signal's wake; every lookup by them is an equality, which implies
 *   it) and `(state, scheduled_for)` (`state = 'scheduled'`: housekeeping's lookups of scheduled
 *   executions, each with that literal condition).
 * The index rebuilds read the step executions table once each while its writes wait: on a large
 * table run it at a quiet moment. A no-op on MariaDB, MySQL and SQLite.
 */
export class GenevaDriveLeanStepWrites1764400009000 implements MigrationInterface {
  name = 'GenevaDriveLeanStepWrites1764400009000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const workflows = await postgresTable(queryRunner, WORKFLOWS_TABLE);
    const executions = await postgresTable(queryRunner, STEP_EXECUTIONS_TABLE);
    if (!workflows || !executions) return;
    await queryRunner.query(dropIndexSql(workflows, INDEX_NAMES.workflowsStepCreated));
    for (const { index } of REDUNDANT_WORKFLOW_INDEXES)
      await queryRunner.query(dropIndexSql(workflows, index));
    await queryRunner.query(
      `ALTER TABLE ${quoteTable(workflows)} SET (fillfactor = ${WORKFLOWS_FILLFACTOR})`,
    );
    for (const { index, columns, where } of NARROWED_EXECUTION_INDEXES) {
      await queryRunner.query(dropIndexSql(executions, index));
      await queryRunner.query(createIndexSql(executions, index, columns, { whereSql: where }));
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const workflows = await postgresTable(queryRunner, WORKFLOWS_TABLE);
    const executions = await postgresTable(queryRunner, STEP_EXECUTIONS_TABLE);
    if (!workflows || !executions) return;
    for (const { index, columns } of NARROWED_EXECUTION_INDEXES) {
      await queryRunner.query(dropIndexSql(executions, index));
      await queryRunner.query(createIndexSql(executions, index, columns));
    }
    await queryRunner.query(`ALTER TABLE ${quoteTable(workflows)} RESET (fillfactor)`);
    for (const { index, columns } of REDUNDANT_WORKFLOW_INDEXES) {
      await queryRunner.query(dropIndexSql(workflows, index));
      await queryRunner.query(createIndexSql(workflows, index, columns));
    }
    await queryRunner.query(createStepFilterIndexSql(workflows));
  }
}
