import type { PathMappings } from "./mapping.ts";
import { normalizeSeparators } from "./normalize.ts";

/**
 * A request no server can scan: its path matches no `SERVER_PATH_MAPPINGS` form and lies in no library. Such a path
 * is not queued for ten file checks (the "not found after 10 checks" ten minutes later, blamed on the disk): it is
 * answered at once, and the reason names the key and the form that almost matched, which is usually the fix (a case
 * or a segment that differs: `/media/tv/` against `/media/TV/`).
 */
export interface Unroutable {
  /** One line for History and the log. */
  readonly reason: string;
  /** What to do. */
  readonly fix: string;
  /** The listed form (or server folder) nearest to the path, when one shares its start. */
  readonly nearest?: string;
}

/**
 * How History's reason for such a request starts: the one marker of "refused for lack of a mapping or a library"
 * (the queue retries these after a mapping change, doctor and the console count them).
 */
export const UNROUTABLE_MARK = "Not queued: ";

/** `path` as received (before mapping) → why it is unroutable; the caller has found it in no library. */
export function unroutableReason(receivedPath: string, serverPath: string, mappings: PathMappings): Unroutable {
  const forms = Object.entries(mappings).flatMap(([key, values]) => [key, ...values]);
  const nearest = nearestForm(receivedPath, forms);
  if (forms.length === 0) {
    return {
      reason: `${UNROUTABLE_MARK}no library of the media server holds '${serverPath}', and SERVER_PATH_MAPPINGS is empty.`,
      fix: "If the apps see the media under other paths than the media server, list those forms in SERVER_PATH_MAPPINGS (autoscan sections lists Plex's library folders); else add the folder to a library.",
    };
  }
  return {
    reason:
      `${UNROUTABLE_MARK}'${receivedPath}' matches no SERVER_PATH_MAPPINGS form and lies in no library` +
      (nearest ? ` (nearest form: '${nearest}')` : "") +
      ".",
    fix: nearest
      ? `Correct the path or the form '${nearest}' in SERVER_PATH_MAPPINGS (they differ at '${differingPart(receivedPath, nearest)}'), or add this path's form under the folder the media server uses; autoscan sections lists its library folders.`
      : "Add the form this path starts with to SERVER_PATH_MAPPINGS, under the folder the media server uses; autoscan sections lists its library folders.",
    ...(nearest ? { nearest } : {}),
  };
}

/**
 * The form that shares the longest start with `path`, segment by segment, compared without case (a case-only
 * difference counts as shared: it is the likeliest slip); at least one named segment must be shared.
 */
export function nearestForm(path: string, forms: readonly string[]): string | undefined {
  const segments = split(path);
  let best: { form: string; score: number } | undefined;
  for (const form of forms) {
    const formSegments = split(form);
    let shared = 0;
    while (shared < formSegments.length && shared < segments.length && same(formSegments[shared], segments[shared])) shared += 1;
    // A form wholly shared, case and all, would have matched: here a shared start counts, the closer the better.
    const score = shared + (shared < formSegments.length ? closeness(formSegments[shared], segments[shared]) : 0);
    if (shared > 0 && (!best || score > best.score)) best = { form, score };
  }
  return best?.form;
}

/** The first segment where the path and the form part (as written), for the fix: `tv` of `/media/tv/…`. */
function differingPart(path: string, form: string): string {
  const a = split(path);
  const b = split(form);
  for (let i = 0; i < b.length; i++) if (a[i] !== b[i]) return a[i] ?? b[i] ?? "";
  return a[b.length] ?? "";
}

function split(path: string): string[] {
  return normalizeSeparators(path).split("/").filter((segment) => segment !== "");
}

function same(a: string | undefined, b: string | undefined): boolean {
  return a !== undefined && b !== undefined && a.toLowerCase() === b.toLowerCase();
}

/** 0…1: how alike two segments are (1 − edit distance / longer length); 0 when either is missing. */
function closeness(a: string | undefined, b: string | undefined): number {
  if (!a || !b) return 0;
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  let previous = Array.from({ length: y.length + 1 }, (_, j) => j);
  for (let i = 1; i <= x.length; i++) {
    const current = [i];
    for (let j = 1; j <= y.length; j++) current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + (x[i - 1] === y[j - 1] ? 0 : 1));
    previous = current;
  }
  return 1 - (previous[y.length] ?? 0) / Math.max(x.length, y.length);
}
