import * as v from "valibot";
import type { PathKind, ScanRequest } from "../core/scan.ts";
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
  const request: ScanRequest = { path, kind, source: options.source, event: "Manual", receivedPath: text };
  const ignoredBy = findIgnoreMatch(path, options.ignoreList);
  return {
    ok: true,
    request,
    ...(mapped.from !== undefined ? { mappedFrom: mapped.from } : {}),
    ...(ignoredBy !== undefined ? { ignoredBy } : {}),
  };
}

export type TriggerParse =
  | { readonly ok: true; readonly accepted: readonly ScanRequest[]; readonly ignored: readonly IgnoredPath[] }
  | { readonly ok: false; readonly reason: string };

export interface IgnoredPath {
  readonly path: string;
  readonly ignoredBy: string;
}

/** `/triggers/manual?dir=…&dir=…&path=…`: every value must be valid, else the whole call is refused. */
export function parseManualTrigger(
  query: { readonly dirs: readonly string[]; readonly paths: readonly string[] },
  options: ManualOptions,
): TriggerParse {
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
