/** Markup that is already safe to send: only `html` and `raw()` make one. */
export class SafeHtml {
  constructor(readonly markup: string) {}

  toString(): string {
    return this.markup;
  }
}

/** A value `html` interpolates: escaped text, safe markup, or a list of either. */
export type HtmlValue =
  SafeHtml | string | number | boolean | null | undefined | readonly HtmlValue[];

const ENTITIES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '`': '&#96;',
};

/** Text as HTML text or attribute value (quoted): every character markup could use is escaped. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (char) => ENTITIES[char]);
}

function render(value: HtmlValue): string {
  if (value instanceof SafeHtml) return value.markup;
  if (Array.isArray(value)) return (value as readonly HtmlValue[]).map(render).join('');
  if (value === null || value === undefined || value === false) return '';
  return escapeHtml(String(value));
}

/**
 * The pages' only way to build markup: every interpolated value is escaped unless it is a
 * `SafeHtml` (the result of another `html` or of `raw()`), so data can never become markup.
 * `null`, `undefined` and `false` render nothing (for `${cond && html`…`}`).
 */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  let markup = strings[0];
  values.forEach((value, index) => {
    markup += render(value) + strings[index + 1];
  });
  return new SafeHtml(markup);
}

/** Markup written by the library itself (the stylesheet), sent as is: never pass data to it. */
export function raw(markup: string): SafeHtml {
  return new SafeHtml(markup);
}
