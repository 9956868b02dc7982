import { escapeHtml } from "../../core/escape-html.ts";

/** "Newer / 51–100 of 10,000 / Older" links that keep the page's other query parameters. */
export function pager(path: string, query: URLSearchParams, offset: number, size: number, total: number, noun: string): string {
  if (total <= size && offset === 0) return "";
  const link = (to: number): string => {
    const next = new URLSearchParams(query);
    if (to > 0) next.set("offset", String(to));
    else next.delete("offset");
    const text = next.toString();
    return escapeHtml(text ? `${path}?${text}` : path);
  };
  const first = total === 0 ? 0 : offset + 1;
  const last = Math.min(total, offset + size);
  const prev = offset > 0;
  const more = offset + size < total;
  const fmt = (n: number): string => n.toLocaleString("en-US");
  return `<nav class="pager" aria-label="Pages">
<a class="btn" href="${prev ? link(Math.max(0, offset - size)) : "#"}" rel="prev"${prev ? "" : ' aria-disabled="true" tabindex="-1"'}>← Previous</a>
<span class="muted small num">${fmt(first)}–${fmt(last)} of ${fmt(total)} ${escapeHtml(noun)}</span>
<a class="btn" href="${more ? link(offset + size) : "#"}" rel="next"${more ? "" : ' aria-disabled="true" tabindex="-1"'}>Next →</a>
</nav>`;
}
