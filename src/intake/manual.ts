import * as v from "valibot";
import type { PathKind, RefreshWish, ScanRequest } from "../core/scan.ts";
import { findIgnoreMatch } from "../paths/ignore.ts";
import type { PathMapper } from "../paths/mapping.ts";
import { isAbsolutePath, withoutTrailingSlash } from "../paths/normalize.ts";
import { anyFormPath } from "./received-paths.ts";

/**
 * Manual scan requests: the form post `eventType=Manual&filepath=<path>` (plex_autoscan, `curl -d`), the manual page,
 * and Cloudbox/autoscan's `/triggers/manual?dir=…&path=…` (Tdarr, FileFlows, Bazarr, scripts).
 *
 * The path may be in any form listed in `SERVER_PATH_MAPPINGS` (a host path, a container path, `My Drive/…`); it is
 * mapped to the server's form and must be absolute once mapped. `SERVER_IGNORE_LIST` applies here only, as in
 * plex_autoscan: an entry that is a case-insensitive substring of the mapped path drops the request.
 */
export interface ManualOptions {
  readonly mapper: PathMapper;
  readonly ignoreList: readonly string[];
  /** `Manual`, or `Manual (name)` for a labelled URL. */
  readonly source: string;
  /** `refresh=` asked for a refresh in place of what the path names, after its scan (`parseRefreshParam`). */
  readonly refresh?: RefreshWish;
}

export type ManualParse =
  | {
      readonly ok: true;
      readonly request: ScanRequest;
      /** True when a `SERVER_PATH_MAPPINGS` form matched (the page says which). */
      readonly mappedFrom?: string;
      /** The `SERVER_IGNORE_LIST` entry that matched; the request must not be queued. */
      readonly ignoredBy?: string;
    }
  | { readonly ok: false; readonly reason: string };

/** More `dir`/`path` parameters than a script would ever send in one call. */
export const MAX_TRIGGER_PATHS = 1000;

/**
 * One manual path. `kind` is `unknown` for `filepath` and `?path=` (the queue looks at the disk), `folder` for `?dir=`.
 * Surrounding whitespace is dropped: it comes from copy-paste and phone keyboards, not from real names.
 */
export function parseManualPath(raw: unknown, kind: PathKind, options: ManualOptions, field = "filepath"): ManualParse {
  if (raw === undefined || raw === null || raw === "") return { ok: false, reason: `missing '${field}'` };
  if (typeof raw !== "string") return { ok: false, reason: `'${field}' must be text` };
  const text = raw.trim();
  const checked = v.safeParse(anyFormPath, text);
  if (!checked.success) return { ok: false, reason: `'${field}' ${checked.issues[0]?.message ?? "is not valid"}` };

  const mapped = options.mapper.toServer(text);
  if (!isAbsolutePath(mapped.path)) {
    return { ok: false, reason: `'${field}' must be an absolute path or start with a SERVER_PATH_MAPPINGS form` };
  }
  const path = kind === "folder" ? withoutTrailingSlash(mapped.path) : mapped.path;
  const request: ScanRequest = {
    path,
    kind,
    source: options.source,
    event: "Manual",
    receivedPath: text,
    ...(options.refresh ? { refresh: options.refresh } : {}),
  };
  const ignoredBy = findIgnoreMatch(path, options.ignoreList);
  return {
    ok: true,
    request,
    ...(mapped.from !== undefined ? { mappedFrom: mapped.from } : {}),
    ...(ignoredBy !== undefined ? { ignoredBy } : {}),
  };
}

/**
 * `refresh=` on a manual request (`/triggers/manual?path=…&refresh=1`, the form, JSON): after its scan, the item the
 * path names is re-read in place. `1` (also `true`, `yes`, `on`, `file`): the file changed in place (a transcode, a
 * subtitle added), so its metadata and its streams; `metadata`: its metadata only. `0`, `false`, `no`, `off` or
 * nothing: a scan only. Anything else is refused, saying what is accepted (a typo must not quietly scan only).
 */
export function parseRefreshParam(raw: unknown): { readonly ok: true; readonly wish?: RefreshWish } | { readonly ok: false; readonly reason: string } {
  if (raw === undefined || raw === null) return { ok: true };
  const value = (typeof raw === "boolean" ? String(raw) : typeof raw === "number" ? String(raw) : typeof raw === "string" ? raw : "?").trim().toLowerCase();
  if (["", "0", "false", "no", "off"].includes(value)) return { ok: true };
  if (["1", "true", "yes", "on", "file"].includes(value)) return { ok: true, wish: "file" };
  if (value === "metadata") return { ok: true, wish: "metadata" };
  return { ok: false, reason: `'refresh' must be 1 (re-read the file: metadata and streams), metadata, or 0; got '${String(raw).slice(0, 40)}'` };
}

export type TriggerParse =
  | { readonly ok: true; readonly accepted: readonly ScanRequest[]; readonly ignored: readonly IgnoredPath[] }
  | { readonly ok: false; readonly reason: string };

export interface IgnoredPath {
  readonly path: string;
  readonly ignoredBy: string;
}

/** `/triggers/manual?dir=…&dir=…&path=…[&refresh=1]`: every value must be valid, else the whole call is refused. */
export function parseManualTrigger(
  query: { readonly dirs: readonly string[]; readonly paths: readonly string[]; readonly refresh?: string },
  base: ManualOptions,
): TriggerParse {
  const refresh = parseRefreshParam(query.refresh);
  if (!refresh.ok) return refresh;
  const options: ManualOptions = { ...base, ...(refresh.wish ? { refresh: refresh.wish } : {}) };
  const total = query.dirs.length + query.paths.length;
  if (total === 0) return { ok: false, reason: "no 'dir' or 'path' parameter given" };
  if (total > MAX_TRIGGER_PATHS) return { ok: false, reason: `at most ${MAX_TRIGGER_PATHS} 'dir'/'path' parameters per call` };
  const accepted: ScanRequest[] = [];
  const ignored: IgnoredPath[] = [];
  const entries = [
    ...query.dirs.map((value) => ({ value, kind: "folder" as const, field: "dir" })),
    ...query.paths.map((value) => ({ value, kind: "unknown" as const, field: "path" })),
  ];
  for (const entry of entries) {
    const parsed = parseManualPath(entry.value, entry.kind, options, entry.field);
    if (!parsed.ok) return parsed;
    if (parsed.ignoredBy !== undefined) ignored.push({ path: parsed.request.path, ignoredBy: parsed.ignoredBy });
    else accepted.push(parsed.request);
  }
  return { ok: true, accepted, ignored };
}
