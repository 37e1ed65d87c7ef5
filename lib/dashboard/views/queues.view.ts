import type { QueuesOverview } from '../dashboard-timeline.interface';
import { html, type SafeHtml } from '../html';
import { layout } from './layout.view';

const TRANSPORT: Record<QueuesOverview['transport'], string> = {
  redis: 'BullMQ on Redis',
  postgres: 'BullMQ on PostgreSQL (its PostgreSQL backend)',
  local: "local (steps run in this process, jobs held in memory; this page shows this process's)",
  'in-process': 'the testing module (no transport)',
};

/** Each queue's jobs by state and the workers seen consuming it. */
export function queuesView(base: string, overview: QueuesOverview): SafeHtml {
  const body = html`<p>Transport: <strong>${TRANSPORT[overview.transport]}</strong></p>
    ${overview.problem !== null && html`<p class="error" role="alert">The transport did not answer: ${overview.problem}</p>`}
    <div class="scroll">
      <table>
        <thead>
          <tr>
            <th scope="col">Queue</th>
            <th scope="col">Waiting</th>
            <th scope="col">Delayed</th>
            <th scope="col">Active</th>
            <th scope="col">Workers seen</th>
          </tr>
        </thead>
        <tbody>
          ${overview.queues.map(
            (queue) =>
              html`<tr>
                <td>${queue.queue}</td>
                <td>${queue.waiting}</td>
                <td>${queue.delayed}</td>
                <td>${queue.active}</td>
                <td>${queue.workers}</td>
              </tr>`,
          )}
        </tbody>
      </table>
    </div>`;
  return layout(base, 'Queues', body);
}
