import { escapeHtml, html, raw } from '../../../lib/dashboard/html';

describe('dashboard html``', () => {
  it('escapes every interpolated string, in text and in attributes', () => {
    const hostile = `<script>alert("x")</script>' onload='x' \`&`;
    const out = html`<p title="${hostile}">${hostile}</p>`.markup;
    expect(out).not.toMatch(/<script>|"x"|' onload/);
    expect(out).toBe(
      `<p title="${escapeHtml(hostile)}">&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39; onload=&#39;x&#39; &#96;&amp;</p>`,
    );
  });

  it('passes nested html`` and raw() through, escapes lists item by item', () => {
    const items = ['<a>', html`<b>bold</b>`];
    expect(html`<div>${items}${raw('<hr>')}</div>`.markup).toBe(
      '<div>&lt;a&gt;<b>bold</b><hr></div>',
    );
  });

  it('renders null, undefined and false as nothing, numbers and true as text', () => {
    expect(html`${null}${undefined}${false}|${0}|${true}`.markup).toBe('|0|true');
  });

  it('does not treat a look-alike object as markup', () => {
    const fake = { markup: '<i>' } as unknown as string;
    expect(html`${fake}`.markup).toBe('[object Object]');
  });
});
