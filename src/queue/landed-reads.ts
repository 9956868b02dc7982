import type { AsyncRows } from "./store-port.ts";
import { HISTORY_REQUESTS_KEPT } from "./rules/dispatch-records.ts";
import type { RefreshWish } from "../core/scan.ts";
import { RESCAN_REQUEST, namesFile } from "./rules/landed.ts";
import { refreshWish } from "./rules/refresh.ts";

/** A target's delivery whose landed look is due (`rules/landed.ts`), with what the look needs. */
export interface DueLook {
  readonly itemId: number;
  readonly target: string;
  /** The folder the target scanned (server form). */
  readonly folder: string;
  /** When the folder's first request arrived: "landed after" counts from it. */
  readonly firstAt: number;
  /** The files the requests named (their first ones: a finished folder keeps `HISTORY_REQUESTS_KEPT`). */
  readonly files: readonly { readonly path: string; readonly deleted: boolean }[];
  /** Refresh in place asked for the folder (`rules/refresh.ts`): done once the look sees every file. */
  readonly refresh?: RefreshWish;
}

/** Looks due at `now`, the oldest due first; written once in SQL both stores read alike. */
export async function dueLooks(rows: AsyncRows, now: number, limit: number): Promise<DueLook[]> {
  const due = await rows.all<{ item_id: number; target: string; folder: string; scan_folder: string | null; first_at: number; refresh: number | null }>(
    `SELECT t.item_id, t.target, i.folder, i.scan_folder, i.first_at, i.refresh FROM item_targets t JOIN items i ON i.id = t.item_id
     WHERE t.landed = 'pending' AND t.landed_check_at <= ? ORDER BY t.landed_check_at, t.item_id LIMIT ?`,
    [now, limit],
  );
  return Promise.all(
    due.map(async (row) => {
      const refresh = refreshWish(Number(row.refresh ?? 0));
      return {
        itemId: row.item_id,
        target: row.target,
        folder: row.scan_folder ?? row.folder,
        firstAt: row.first_at,
        files: await requestedFiles(rows, row.item_id, row.folder),
        ...(refresh ? { refresh } : {}),
      };
    }),
  );
}

/** When the next look falls due (a hint for the checker's sleep). */
export async function nextLookAt(rows: AsyncRows): Promise<number | undefined> {
  const row = await rows.get<{ at: number | null }>("SELECT MIN(landed_check_at) AS at FROM item_targets WHERE landed = 'pending'");
  return row?.at ?? undefined;
}

/** Where a landed check's rescan stands for one target: still to be scanned, or scanned at `scannedAt`. */
export type RescanState = { readonly waiting: true } | { readonly waiting: false; readonly scannedAt: number };

/**
 * The newest landed check's rescan of one of `files`, as `target` sees it: waiting (queued, held for an anchor or a
 * mount, or failing and retried: a folder still pending that `target` has not scanned), or scanned by it, when.
 * `undefined`: none, or it ended without `target` scanning it (given up, removed).
 */
export async function rescanState(rows: AsyncRows, target: string, files: readonly string[]): Promise<RescanState | undefined> {
  if (files.length === 0) return undefined;
  const row = await rows.get<{ state: string; at: number | null }>(
    `SELECT i.state, t.at FROM items i JOIN requests r ON r.item_id = i.id
       LEFT JOIN item_targets t ON t.item_id = i.id AND t.target = ?
     WHERE r.source = ? AND r.event = ? AND r.path IN (${files.map(() => "?").join(", ")})
     ORDER BY i.id DESC LIMIT 1`,
    [target, RESCAN_REQUEST.source, RESCAN_REQUEST.event, ...files],
  );
  if (row?.at !== null && row?.at !== undefined) return { waiting: false, scannedAt: Number(row.at) };
  return row?.state === "pending" ? { waiting: true } : undefined;
}

/**
 * The files the requests named, each once: one any request named without deleting it must be there (an upgrade
 * deletes the old file under the very name of the new one); one only deletes named must be gone.
 */
async function requestedFiles(rows: AsyncRows, itemId: number, folder: string): Promise<{ path: string; deleted: boolean }[]> {
  const requests = await rows.all<{ path: string; kind: string; deleted: number }>(
    "SELECT path, kind, deleted FROM requests WHERE item_id = ? ORDER BY id LIMIT ?",
    [itemId, HISTORY_REQUESTS_KEPT],
  );
  const deleted = new Map<string, boolean>();
  for (const r of requests.filter((request) => namesFile(request, folder))) deleted.set(r.path, (deleted.get(r.path) ?? true) && r.deleted === 1);
  return [...deleted].map(([path, gone]) => ({ path, deleted: gone }));
}
