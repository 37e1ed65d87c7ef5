import { Injectable } from '@nestjs/common';
import type { SignalEntity } from '../entities/signal.entity';
import type { WorkflowEntity } from '../entities/workflow.entity';
import { WorkflowRepository, type WorkflowSearchQuery } from '../ports/workflow.repository';
import { WorkflowService } from '../service/workflow.service';
import type { ResolvedDashboardOptions } from './dashboard-options.interface';
import type {
  TimelineEntry,
  WorkflowListPage,
  WorkflowTimeline,
} from './dashboard-timeline.interface';
import { InjectDashboardOptions } from './resolve-dashboard-options';
import { decodePageStart, encodePageStart } from './workflow-filter';

/** The dashboard's reads: list pages through the repository port, one workflow through the service. */
@Injectable()
export class DashboardReader {
  constructor(
    private readonly repository: WorkflowRepository,
    private readonly service: WorkflowService,
    @InjectDashboardOptions() private readonly options: ResolvedDashboardOptions,
  ) {}

  /** One keyset page; `after` is the opaque value of the previous page's `next`. */
  async list(search: WorkflowSearchQuery, after: unknown): Promise<WorkflowListPage> {
    const limit = this.options.pageSize;
    const rows = await this.repository.searchWorkflows(search, {
      after: decodePageStart(after),
      limit: limit + 1,
    });
    const workflows = rows.slice(0, limit);
    const last = workflows.at(-1);
    return {
      workflows,
      next: rows.length > limit && last ? encodePageStart(last) : null,
    };
  }

  count(search: WorkflowSearchQuery): Promise<number> {
    return this.repository.countWorkflows(search);
  }

  /** The workflow with its timeline, or null for an unknown id. */
  async workflow(id: string): Promise<WorkflowTimeline | null> {
    const workflow = await this.service.find(id);
    if (!workflow) return null;
    const executions = await this.service.executionHistory(workflow);
    const signals: SignalEntity[] = this.repository.features.signals
      ? await this.service.signals(workflow)
      : [];
    const timeline: TimelineEntry[] = [
      ...executions.map((execution) => ({
        kind: 'execution' as const,
        at: execution.createdAt,
        execution,
      })),
      ...signals.map((signal) => ({ kind: 'signal' as const, at: signal.createdAt, signal })),
    ].sort((a, b) => a.at.getTime() - b.at.getTime());
    const stepNames = [...new Set(executions.map((execution) => execution.stepName))];
    if (workflow.nextStepName && !stepNames.includes(workflow.nextStepName)) {
      stepNames.push(workflow.nextStepName);
    }
    return { workflow, timeline, stepNames };
  }

  /** Ids of one page of matching workflows, for bulk actions. */
  async idsAfter(
    search: WorkflowSearchQuery,
    after: WorkflowEntity | undefined,
    limit: number,
  ): Promise<WorkflowEntity[]> {
    return this.repository.searchWorkflows(search, { after, limit });
  }
}
