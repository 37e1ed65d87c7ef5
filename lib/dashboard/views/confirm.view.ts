import type { WorkflowEntity } from '../../entities/workflow.entity';
import { CSRF_FIELD } from '../http/csrf-token';
import type { BulkAction, BulkResult, WorkflowAction } from '../dashboard.actions';
import { html, type SafeHtml } from '../html';
import { filterPairs, type WorkflowFilterFields } from '../workflow-filter';
import { layout } from './layout.view';

function actionFields(action: WorkflowAction, stepNames: string[]): SafeHtml | null {
  if (action === 'resumeAt') {
    return html`<label>Step to resume at<input name="step" list="steps" required /></label>
      <datalist id="steps">
        ${stepNames.map((name) => html`<option value="${name}"></option>`)}
      </datalist>`;
  }
  if (action === 'signal') {
    return html`<label>Signal name<input name="name" required /></label>
      <label>Payload (JSON, optional)<textarea name="payload" rows="4"></textarea></label>
      <label>Idempotency key (optional)<input name="key" /></label>`;
  }
  return null;
}

/** "Really?" for one workflow: a POST form with the CSRF token. */
export function confirmView(
  base: string,
  workflow: WorkflowEntity,
  action: WorkflowAction,
  stepNames: string[],
  csrfToken: string,
): SafeHtml {
  const body = html`<p>
      ${action} workflow
      <a href="${base}/workflows/${workflow.id}">${workflow.id}</a> (${workflow.type}, now
      ${workflow.state})?
    </p>
    <form method="post" action="${base}/workflows/${workflow.id}/${action}">
      <input type="hidden" name="${CSRF_FIELD}" value="${csrfToken}" />
      ${actionFields(action, stepNames)}
      <p class="actions">
        <button type="submit" class="${action === 'cancel' ? 'danger' : ''}">
          Confirm ${action}
        </button>
        <a href="${base}/workflows/${workflow.id}">Back</a>
      </p>
    </form>`;
  return layout(base, `Confirm ${action}`, body);
}

/** The dry run of a bulk action: how many match, and the form that runs it. */
export function bulkConfirmView(
  base: string,
  action: BulkAction,
  fields: WorkflowFilterFields,
  matching: number,
  csrfToken: string,
): SafeHtml {
  const pairs = filterPairs(fields);
  const body = html`<p class="notice" role="status">
      <strong data-testid="matching">${matching}</strong> workflow(s) match this
      filter${pairs.length === 0 && html` (no filter: every workflow)`}.
    </p>
    <ul>
      ${pairs.map(([key, value]) => html`<li>${key}: ${value}</li>`)}
    </ul>
    <form method="post" action="${base}/bulk/${action}">
      <input type="hidden" name="${CSRF_FIELD}" value="${csrfToken}" />
      ${pairs.map(([key, value]) => html`<input type="hidden" name="${key}" value="${value}" />`)}
      <p class="actions">
        <button
          type="submit"
          class="${action === 'cancel' ? 'danger' : ''}"
          ${matching === 0 && html`disabled`}
        >
          ${action} ${matching} workflow(s)
        </button>
        <a href="${base}/">Back</a>
      </p>
    </form>`;
  return layout(base, `Bulk ${action}`, body);
}

/** What a bulk action did. */
export function bulkResultView(base: string, action: BulkAction, result: BulkResult): SafeHtml {
  const body = html`<p class="notice" role="status">
      ${action}: <strong data-testid="done">${result.done}</strong> done, ${result.refused.length}
      refused.
    </p>
    ${
      result.refused.length > 0 &&
      html`<ul>
        ${result.refused.map((entry) => html`<li><a href="${base}/workflows/${entry.id}">${entry.id}</a>: ${entry.message}</li>`)}
      </ul>`
    }
    <p><a href="${base}/">Back to the workflows</a></p>`;
  return layout(base, `Bulk ${action}`, body);
}
