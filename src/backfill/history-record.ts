import * as v from "valibot";
import type { ScanRequest } from "../core/scan.ts";
import type { PathMapper } from "../paths/mapping.ts";
import { absolutePath, renameFolders, type ReceivedPath } from "../intake/received-paths.ts";
import { toScanRequests } from "../intake/webhook.ts";
import { ARR_TYPE_FACTS, type ArrType } from "../arr/arr-type.ts";
import type { HistoryRecord } from "../arr/history-wire.ts";

/**
 * The scan requests an *arr history record (src/arr/history-wire.ts) stands for: the SAME requests the matching
 * webhook would have produced (src/intake/*: same path checks, same mapping, same kinds), with the webhook's event
 * name plus " (backfill)":
 * - import → the imported file (`Download`); an upgrade's replaced file comes from its own delete record;
 * - rename → the folder the file left (deleted, when it is another folder) and the folder it went to (`Rename`), as
 *   the webhook's `renamed…Files[]` give; Sonarr writes one record per renamed episode, so the folders repeat and
 *   merge in the queue;
 * - file delete → the deleted file, `deleted: true` (`EpisodeFileDelete`, `MovieFileDelete` …), whatever the reason:
 *   an `Upgrade` delete names the folder the new file is imported to, and the queue merges the two;
 * - anything else (grabs, failures, Lidarr's retags …) → no request.
 */
export interface RecordRequestOptions {
  readonly type: ArrType;
  /** Who asked, as the log shows it: `Sonarr`, `Sonarr (anime)`. */
  readonly source: string;
  readonly mapper: PathMapper;
}

/** The suffix of every backfilled request's event, so the log and the console say where it came from. */
export const BACKFILL_SUFFIX = " (backfill)";

export type RecordPaths =
  | { readonly ok: true; readonly event: string; readonly paths: readonly ReceivedPath[] }
  | { readonly ok: false; readonly reason: string };

/** The record's paths, in the app's form, with the webhook's event name; or why it carries none that can be used. */
export function recordPaths(record: HistoryRecord, type: ArrType): RecordPaths {
  switch (record.eventType) {
    case "import": {
      const checked = checkPath(record.importedPath, "data.importedPath");
      return typeof checked === "string"
        ? failure(record, checked)
        : { ok: true, event: "Download", paths: [{ path: checked.path, kind: "file" }] };
    }
    case "rename": {
      const now = checkPath(record.path, "data.path");
      if (typeof now === "string") return failure(record, now);
      // An old record may lack the previous path: then only the new folder is known, as a webhook without one.
      const before = record.previousPath === undefined ? undefined : checkPath(record.previousPath, "data.sourcePath");
      if (typeof before === "string") return failure(record, before);
      const folders = renameFolders(undefined, [{ path: now.path, previousPath: before?.path }], "data", "series.path");
      return typeof folders === "string" ? failure(record, folders) : { ok: true, event: "Rename", paths: folders };
    }
    case "delete": {
      const checked = checkPath(record.deletedPath, "sourceTitle");
      return typeof checked === "string"
        ? failure(record, checked)
        : { ok: true, event: ARR_TYPE_FACTS[type].deleteWebhookEvent, paths: [{ path: checked.path, kind: "file", deleted: true }] };
    }
    case "other":
      return { ok: true, event: record.appEventType, paths: [] };
  }
}

/** The record → the scan requests its webhook would have produced (none when its paths cannot be used). */
export function recordRequests(record: HistoryRecord, options: RecordRequestOptions): ScanRequest[] {
  const found = recordPaths(record, options.type);
  if (!found.ok || found.paths.length === 0) return [];
  return toScanRequests(found.paths, { mapper: options.mapper, source: options.source, event: found.event + BACKFILL_SUFFIX });
}

function checkPath(path: string | undefined, field: string): { path: string } | string {
  if (path === undefined) return `missing '${field}'`;
  const result = v.safeParse(absolutePath, path);
  if (result.success) return { path: result.output };
  return `'${field}' ${result.issues[0]?.message ?? "is not a usable path"}`;
}

function failure(record: HistoryRecord, reason: string): RecordPaths {
  return { ok: false, reason: `history record ${record.id} (${record.appEventType}): ${reason}` };
}
