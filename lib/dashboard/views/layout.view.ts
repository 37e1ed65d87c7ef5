import { html, raw, type SafeHtml } from '../html';

const STYLE = raw(`
*{box-sizing:border-box}
body{font:15px/1.45 system-ui,sans-serif;margin:0;color:#1d232a;background:#f6f7f9}
header{background:#1d3557;color:#fff;padding:.6rem 1rem;display:flex;flex-wrap:wrap;gap:1rem;align-items:center}
header a{color:#fff}
main{padding:1rem;max-width:80rem;margin:0 auto}
a{color:#1d4ed8}
a:focus,button:focus,input:focus,select:focus{outline:3px solid #f59e0b;outline-offset:1px}
table{border-collapse:collapse;width:100%;background:#fff}
th,td{text-align:left;padding:.35rem .5rem;border-bottom:1px solid #dde1e6;vertical-align:top}
.scroll{overflow-x:auto}
form.filters{display:grid;grid-template-columns:repeat(auto-fill,minmax(11rem,1fr));gap:.5rem;background:#fff;padding:.75rem;margin-bottom:1rem}
label{display:flex;flex-direction:column;font-size:.85rem;gap:.15rem}
input,select,textarea,button{font:inherit;padding:.35rem}
button{background:#1d4ed8;color:#fff;border:0;border-radius:4px;padding:.4rem .9rem;cursor:pointer}
button.danger{background:#b91c1c}
.notice{background:#fff7d6;border-left:4px solid #f59e0b;padding:.6rem;margin-bottom:1rem}
.error{background:#fde8e8;border-left:4px solid #b91c1c;padding:.6rem;margin-bottom:1rem}
.state{display:inline-block;padding:0 .4rem;border-radius:3px;background:#e5e7eb;font-size:.85rem}
.s-ready,.s-scheduled{background:#dbeafe}.s-performing,.s-in_progress{background:#fef3c7}
.s-paused,.s-waiting{background:#ede9fe}.s-finished,.s-completed,.s-consumed{background:#dcfce7}
.s-canceled,.s-failed{background:#fee2e2}
ol.timeline{list-style:none;padding:0}
ol.timeline>li{background:#fff;margin-bottom:.5rem;padding:.6rem;border-left:4px solid #94a3b8}
ol.timeline>li.signal{border-left-color:#7c3aed}
pre{white-space:pre-wrap;word-break:break-word;background:#f1f5f9;padding:.5rem;margin:.3rem 0;font-size:.8rem}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.2rem .8rem;margin:.3rem 0}
dt{font-weight:600}dd{margin:0;word-break:break-all}
.actions{display:flex;flex-wrap:wrap;gap:.5rem;margin:.5rem 0}
.sr{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}
`);

/** The page frame: title, navigation, an optional notice, the body. */
export function layout(base: string, title: string, body: SafeHtml): SafeHtml {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>${title} · geneva-drive</title>
        <style>
          ${STYLE}
        </style>
      </head>
      <body>
        <header>
          <strong>geneva-drive</strong>
          <nav><a href="${base}/">Workflows</a> · <a href="${base}/queues">Queues</a></nav>
        </header>
        <main>
          <h1>${title}</h1>
          ${body}
        </main>
      </body>
    </html>`;
}

/** A page that only says something (a refusal, a result). */
export function messagePage(
  base: string,
  title: string,
  message: string,
  kind: 'notice' | 'error',
): SafeHtml {
  return layout(
    base,
    title,
    html`<p class="${kind}" role="${kind === 'error' ? 'alert' : 'status'}">${message}</p>
      <p><a href="${base}/">Back to the workflows</a></p>`,
  );
}

/** A state badge. */
export function stateBadge(state: string): SafeHtml {
  return html`<span class="state s-${state}">${state}</span>`;
}

/** A timestamp as ISO text, or a dash. */
export function when(date: Date | null | undefined): string {
  return date ? date.toISOString() : '—';
}
