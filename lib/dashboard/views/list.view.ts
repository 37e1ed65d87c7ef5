import { WORKFLOW_STATES } from '../../common/states';
import type { WorkflowEntity } from '../../entities/workflow.entity';
import type { BulkAction } from '../dashboard.actions';
import type { WorkflowListPage } from '../dashboard-timeline.interface';
import { html, type SafeHtml } from '../html';
import { filterPairs, type WorkflowFilterFields } from '../workflow-filter';
import { layout, stateBadge, when } from './layout.view';

/** `?a=1&b=2` of the pairs (empty for none). */
export function queryString(pairs: Array<[string, string]>): string {
  const query = new URLSearchParams(pairs).toString();
  return query === '' ? '' : `?${query}`;
}

function textField(
  label: string,
  name: keyof WorkflowFilterFields,
  value: string | undefined,
  hint = '',
): SafeHtml {
  return html`<label
    >${label}<input name="${name}" value="${value ?? ''}" placeholder="${hint}"
  /></label>`;
}

function row(base: string, workflow: WorkflowEntity): SafeHtml {
  return html`<tr>
    <td><a href="${base}/workflows/${workflow.id}">${workflow.id}</a></td>
    <td>${workflow.type}</td>
    <td>${stateBadge(workflow.state)}</td>
    <td>${workflow.currentStepName ?? workflow.nextStepName ?? '—'}</td>
    <td>${workflow.heroType ?? '—'} ${workflow.heroId ?? ''}</td>
    <td>${when(workflow.createdAt)}</td>
  </tr>`;
}

/** The workflows list: the filter form, one page, the next-page link, bulk actions. */
export function listView(
  base: string,
  fields: WorkflowFilterFields,
  page: WorkflowListPage,
  actions: readonly BulkAction[],
  problem: string | null,
): SafeHtml {
  const pairs = filterPairs(fields);
  const selected = new Set(fields.state ?? []);
  const body = html` ${problem !== null && html`<p class="error" role="alert">${problem}</p>`}
    <form class="filters" method="get" action="${base}/" aria-label="Filter workflows">
      <label
        >State<select name="state" multiple size="3">
          ${WORKFLOW_STATES.map((state) => html`<option value="${state}" ${selected.has(state) && html`selected`}>${state}</option>`)}
        </select></label
      >
      ${textField('Class', 'class', fields.class, 'OrderWorkflow')}
      ${textField('Hero type', 'heroType', fields.heroType)}
      ${textField('Hero id', 'heroId', fields.heroId)}
      ${textField('Current step', 'step', fields.step)}
      ${textField('Waiting longer than', 'waitingLongerThan', fields.waitingLongerThan, '15m, 2h, 3d')}
      ${textField('Created from', 'createdFrom', fields.createdFrom, '2026-01-31')}
      ${textField('Created to', 'createdTo', fields.createdTo, '2026-02-28')}
      ${textField('Workflow or hero id', 'q', fields.q)}
      <div><button type="submit">Filter</button> <a href="${base}/">Clear</a></div>
    </form>
    <div class="scroll">
      <table>
        <caption class="sr">
          Workflows, newest first
        </caption>
        <thead>
          <tr>
            <th scope="col">Id</th>
            <th scope="col">Class</th>
            <th scope="col">State</th>
            <th scope="col">Step</th>
            <th scope="col">Hero</th>
            <th scope="col">Created</th>
          </tr>
        </thead>
        <tbody>
          ${
            page.workflows.length === 0
              ? html`<tr>
                  <td colspan="6">No workflow matches.</td>
                </tr>`
              : page.workflows.map((workflow) => row(base, workflow))
          }
        </tbody>
      </table>
    </div>
    ${page.next !== null && html`<p><a rel="next" href="${base}/${queryString([...pairs, ['after', page.next]])}">Next page</a></p>`}
    ${
      actions.length > 0 &&
      html`<h2>Bulk actions on this filter</h2>
        <p class="actions">
          ${actions.map((action) => html`<a href="${base}/bulk/${action}${queryString(pairs)}">${action} all matching…</a>`)}
        </p>`
    }`;
  return layout(base, 'Workflows', body);
}
