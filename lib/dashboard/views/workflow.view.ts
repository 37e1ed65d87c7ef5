import type { SignalEntity } from '../../entities/signal.entity';
import type { StepExecutionEntity } from '../../entities/step-execution.entity';
import type { WorkflowAction } from '../dashboard.actions';
import type { WorkflowTimeline } from '../dashboard-timeline.interface';
import { html, type SafeHtml } from '../html';
import { layout, stateBadge, when } from './layout.view';

/** A JSON value for display (pretty-printed; what it cannot print, as text). */
export function json(value: unknown): string {
  try {
    return JSON.stringify(value, null, 2) ?? 'null';
  } catch {
    return String(value);
  }
}

function executionItem(execution: StepExecutionEntity): SafeHtml {
  return html`<li class="execution" id="execution-${execution.id}">
    <strong>Step ${execution.stepName}</strong> ${stateBadge(execution.state)}
    ${execution.outcome && html`outcome <code>${execution.outcome}</code>`}
    <dl>
      <dt>Execution</dt>
      <dd>${execution.id}</dd>
      <dt>Scheduled for</dt>
      <dd>${when(execution.scheduledFor)}</dd>
      <dt>Started</dt>
      <dd>${when(execution.startedAt)}</dd>
      <dt>Finished</dt>
      <dd>${when(execution.finishedAt)}</dd>
      ${
        execution.waitingSince &&
        html`<dt>Waiting since</dt>
          <dd>${when(execution.waitingSince)}</dd>`
      }
      ${
        execution.waitDeadlineAt &&
        html`<dt>Wait deadline</dt>
          <dd>${when(execution.waitDeadlineAt)}</dd>`
      }
      ${
        execution.jobId &&
        html`<dt>Job id</dt>
          <dd>${execution.jobId}</dd>`
      }
      ${
        execution.signalId &&
        html`<dt>Signal</dt>
          <dd><a href="#signal-${execution.signalId}">${execution.signalId}</a></dd>`
      }
    </dl>
    ${
      execution.cursor !== null &&
      execution.cursor !== undefined &&
      html`<details>
        <summary>Cursor</summary>
        <pre>${json(execution.cursor)}</pre>
      </details>`
    }
    ${execution.errorMessage !== null && html`<p class="error">${execution.errorClassName ?? 'Error'}: ${execution.errorMessage}</p>`}
    ${
      execution.errorBacktrace &&
      html`<details>
        <summary>Backtrace</summary>
        <pre>${execution.errorBacktrace}</pre>
      </details>`
    }
  </li>`;
}

function signalItem(signal: SignalEntity): SafeHtml {
  return html`<li class="signal" id="signal-${signal.id}">
    <strong>Signal ${signal.name}</strong> ${stateBadge(signal.state)}
    <dl>
      <dt>Signal</dt>
      <dd>${signal.id}</dd>
      <dt>Key</dt>
      <dd>${signal.idempotencyKey ?? '—'}</dd>
      <dt>Received</dt>
      <dd>${when(signal.createdAt)}</dd>
      <dt>Claimed</dt>
      <dd>${signal.claimed} (last ${when(signal.claimedAt)})</dd>
      <dt>Consumed</dt>
      <dd>${signal.consumed} (last ${when(signal.consumedAt)})</dd>
    </dl>
    <details open>
      <summary>Payload</summary>
      <pre>${json(signal.payload)}</pre>
    </details>
  </li>`;
}

/** One workflow: its row, the actions, the timeline of executions and signals. */
export function workflowView(
  base: string,
  data: WorkflowTimeline,
  actions: readonly WorkflowAction[],
): SafeHtml {
  const { workflow } = data;
  const body = html` <dl>
      <dt>Id</dt>
      <dd>${workflow.id}</dd>
      <dt>Class</dt>
      <dd><a href="${base}/?class=${encodeURIComponent(workflow.type)}">${workflow.type}</a></dd>
      <dt>State</dt>
      <dd>${stateBadge(workflow.state)}</dd>
      <dt>Hero</dt>
      <dd>${workflow.heroType ?? '—'} ${workflow.heroId ?? ''}</dd>
      <dt>Current step</dt>
      <dd>${workflow.currentStepName ?? '—'}</dd>
      <dt>Next step</dt>
      <dd>${workflow.nextStepName ?? '—'}</dd>
      <dt>Created</dt>
      <dd>${when(workflow.createdAt)}</dd>
      <dt>Transitioned</dt>
      <dd>${when(workflow.transitionedAt)}</dd>
    </dl>
    <details>
      <summary>Metadata</summary>
      <pre>${json(workflow.metadata)}</pre>
    </details>
    ${
      actions.length > 0 &&
      html`<h2>Actions</h2>
        <p class="actions">
          ${actions.map((action) => html`<a href="${base}/workflows/${workflow.id}/${action}">${action}…</a>`)}
        </p>`
    }
    <h2>Timeline</h2>
    <ol class="timeline">
      ${data.timeline.map((entry) => (entry.kind === 'execution' ? executionItem(entry.execution) : signalItem(entry.signal)))}
    </ol>`;
  return layout(base, `Workflow ${workflow.type}`, body);
}
