import type { ScanRequest } from "../../core/scan.ts";
import { isAbsolutePath } from "../../paths/normalize.ts";
import type { Database } from "./sql-js.ts";

/**
 * plex_autoscan's own queue, found in the file `--queuefile` names: l3uddz's `queueitemmodel(scan_path, scan_for,
 * scan_section, scan_type)` or by275's `scan_item(path, request_from, section_id, event_type, created_at)`. Their
 * paths are already in the media server's form (plex_autoscan mapped before queueing); a path may name a file or a
 * folder, so the kind is `unknown` and the queue decides as for any such request.
 */
export function isLegacyQueue(db: Database): boolean {
  const tables = tableNames(db);
  return !tables.has("items") && (tables.has("queueitemmodel") || tables.has("scan_item"));
}

export function readLegacyRequests(db: Database): ScanRequest[] {
  const tables = tableNames(db);
  const out: ScanRequest[] = [];
  if (tables.has("queueitemmodel")) {
    for (const row of selectAll(db, "SELECT * FROM queueitemmodel ORDER BY rowid")) {
      out.push(toRequest(row.scan_path, row.scan_for, row.scan_type));
    }
  }
  if (tables.has("scan_item")) {
    for (const row of selectAll(db, "SELECT * FROM scan_item ORDER BY rowid")) {
      out.push(toRequest(row.path, row.request_from, row.event_type));
    }
  }
  // A row whose path is not a full path could not have been scanned either; it is left behind (in the backup).
  return out.filter((request) => isAbsolutePath(request.path));
}

function toRequest(path: unknown, source: unknown, event: unknown): ScanRequest {
  return {
    path: typeof path === "string" ? path : "",
    kind: "unknown",
    source: typeof source === "string" && source.length > 0 ? source : "plex_autoscan",
    event: typeof event === "string" && event.length > 0 ? event : "Restored",
  };
}

function tableNames(db: Database): Set<string> {
  const rows = db.exec("SELECT name FROM sqlite_master WHERE type = 'table'")[0]?.values ?? [];
  return new Set(rows.map((row) => String(row[0])));
}

function selectAll(db: Database, sql: string): Record<string, unknown>[] {
  const result = db.exec(sql)[0];
  if (!result) return [];
  return result.values.map((values) => Object.fromEntries(result.columns.map((column, i) => [column, values[i]])));
}
