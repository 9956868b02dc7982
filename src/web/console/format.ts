import { escapeHtml } from "../../core/escape-html.ts";

/**
 * How the console writes times, durations and paths. Every time is a `<time>` element with its ISO value: the page's
 * script keeps relative times current (a countdown to a due time) and shows the absolute time in the reader's zone
 * on hover; without the script the server's text stands.
 */
export function timeTag(ms: number, now: number): string {
  const iso = new Date(ms).toISOString();
  return `<time datetime="${iso}" title="${escapeHtml(absolute(ms))}">${escapeHtml(relative(ms, now))}</time>`;
}

/** "in 2 min 5 s", "3 h ago", "just now". */
export function relative(ms: number, now: number): string {
  const delta = ms - now;
  if (Math.abs(delta) < 1000) return delta >= 0 ? "now" : "just now";
  const span = duration(Math.abs(delta), true);
  return delta > 0 ? `in ${span}` : `${span} ago`;
}

/** "850 ms", "4.2 s", "3 min 10 s", "2 h 5 min", "3 days". `coarse` drops the sub-second part. */
export function duration(ms: number, coarse = false): string {
  if (ms < 1000) return coarse ? "1 s" : `${Math.round(ms)} ms`;
  const s = Math.floor(ms / 1000);
  if (s < 60) return coarse || s >= 10 ? `${s} s` : `${(ms / 1000).toFixed(1)} s`;
  const min = Math.floor(s / 60);
  if (min < 60) return s % 60 === 0 ? `${min} min` : `${min} min ${s % 60} s`;
  const h = Math.floor(min / 60);
  if (h < 48) return min % 60 === 0 ? `${h} h` : `${h} h ${min % 60} min`;
  return `${Math.floor(h / 24)} days`;
}

/** "2026-11-25 08:00:00 UTC". */
export function absolute(ms: number): string {
  return `${new Date(ms).toISOString().replace("T", " ").replace(/\.\d+Z$/, "")} UTC`;
}

/** A path as text: wraps anywhere, left to right whatever its letters (an RTL name keeps the slashes in order). */
export function pathHtml(path: string, className = "path"): string {
  return `<span class="${className}" dir="ltr">${escapeHtml(path)}</span>`;
}

/** A message as HTML: escaped, with `backticked` commands and keys shown as code. */
export function messageHtml(text: string): string {
  return escapeHtml(text).replace(/`([^`<>]{1,200})`/g, "<code>$1</code>");
}

/** "1 folder" / "3 folders". */
export function plural(count: number, one: string, many = `${one}s`): string {
  return `${count.toLocaleString("en-US")} ${count === 1 ? one : many}`;
}
