import type { EnqueuedItem, ScanRequest } from "../core/scan.ts";
import { resolvePriority, type ScanPriorities } from "../paths/priority.ts";
import type { StoreTransaction } from "./store/queue-store.ts";
import type { ItemRow, RequestRow } from "./store/rows.ts";
import { resolveWorkUnit } from "./work-unit.ts";

/**
 * Merging and delay, plex_autoscan's rules with its flaws fixed:
 * - one pending item per folder; a request for a waiting folder merges into it (lowest priority number kept, every
 *   request kept as a row for the log and history);
 * - a folder is due `delay` after its latest request, but never later than 3 × `delay` after its first, so a steady
 *   trickle of requests cannot starve it (plex_autoscan re-slept a full delay per merged request, without bound).
 */
export interface MergePolicy {
  readonly delayMs: number;
  readonly priorities: ScanPriorities;
}

/** What happened to one request, for the log lines written once it is durable. */
export interface EnqueueEvent {
  readonly request: ScanRequest;
  readonly itemId: number;
  readonly folder: string;
  readonly merged: boolean;
  readonly dueAt: number;
}

export interface EnqueueOutcome {
  /** The store's time the requests were merged at. */
  readonly at: number;
  readonly items: EnqueuedItem[];
  readonly events: EnqueueEvent[];
  readonly earliestDue: number;
}

export function applyRequests(
  tx: StoreTransaction,
  requests: readonly ScanRequest[],
  now: number,
  policy: MergePolicy,
): EnqueueOutcome {
  const items: EnqueuedItem[] = [];
  const events: EnqueueEvent[] = [];
  let earliestDue = Number.POSITIVE_INFINITY;
  for (const request of requests) {
    const unit = resolveWorkUnit(request);
    const existing = pendingItem(tx, unit.folder);
    const item = existing
      ? mergeInto(tx, existing, request, unit.path, now, policy)
      : createItem(tx, unit.folder, request, unit.path, now, policy);
    items.push({ id: item.id, folder: unit.folder, merged: existing !== undefined });
    events.push({ request, itemId: item.id, folder: unit.folder, merged: existing !== undefined, dueAt: item.due_at });
    earliestDue = Math.min(earliestDue, Math.max(item.due_at, item.next_at));
  }
  return { at: now, items, events, earliestDue };
}

function createItem(
  tx: StoreTransaction,
  folder: string,
  request: ScanRequest,
  path: string,
  now: number,
  policy: MergePolicy,
): ItemRow {
  const item = newItemRow(tx.newItemId(), folder, now, policy);
  tx.apply({ k: "item", r: item });
  tx.apply({ k: "req", r: requestRow(tx, item.id, request, path, now) });
  return item;
}

/** A new waiting folder (its first request is stored beside it). */
export function newItemRow(id: number, folder: string, now: number, policy: MergePolicy): ItemRow {
  return {
    id,
    folder,
    state: "pending",
    priority: resolvePriority(folder, policy.priorities),
    first_at: now,
    last_at: now,
    due_at: now + policy.delayMs,
    next_at: 0,
    rev: 1,
    checks: 0,
    scan_folder: null,
    files: null,
    attempts: 0,
    unfinished: 0,
    requests_dropped: 0,
    first_failed_at: null,
    last_error: null,
    finished_at: null,
  };
}

function mergeInto(
  tx: StoreTransaction,
  item: ItemRow,
  request: ScanRequest,
  path: string,
  now: number,
  policy: MergePolicy,
): ItemRow {
  const row = requestRow(tx, item.id, request, path, now);
  // The same request again (an *arr retrying its webhook) restarts the wait but adds no work.
  const duplicate = tx.rows.get<{ id: number }>(
    "SELECT id FROM requests WHERE item_id = ? AND path = ? AND kind = ? AND deleted = ? AND source = ? AND event = ?",
    [item.id, row.path, row.kind, row.deleted, row.source, row.event],
  );
  const merged = mergedItemRow(item, row, duplicate !== undefined, now, policy);
  if (!duplicate) {
    tx.apply({ k: "req", r: row });
    // Targets that already scanned the folder have not seen the new file: every target scans it again.
    tx.apply({ k: "clr", id: item.id });
  }
  tx.apply({ k: "item", r: merged });
  return merged;
}

/**
 * A waiting folder after one more request: the lowest priority kept, the wait restarted within the 3 × delay cap, and
 * (unless it is the same request again) new work.
 */
export function mergedItemRow(item: ItemRow, row: RequestRow, duplicate: boolean, now: number, policy: MergePolicy): ItemRow {
  return {
    ...item,
    priority: Math.min(item.priority, resolvePriority(item.folder, policy.priorities)),
    last_at: now,
    due_at: Math.max(item.due_at, Math.min(now + policy.delayMs, item.first_at + 3 * policy.delayMs)),
    ...(duplicate ? {} : addsWork(item, row)),
  };
}

/** New work: a scan already running does not count for it, and the files are checked again. */
function addsWork(item: ItemRow, row: RequestRow): Partial<ItemRow> {
  return {
    rev: item.rev + 1,
    scan_folder: null,
    files: null,
    checks: row.deleted ? item.checks : 0,
  };
}

function requestRow(tx: StoreTransaction, itemId: number, request: ScanRequest, path: string, now: number): RequestRow {
  return requestRowOf(tx.newRequestId(), itemId, request, path, now);
}

export function requestRowOf(id: number, itemId: number, request: ScanRequest, path: string, now: number): RequestRow {
  return {
    id,
    item_id: itemId,
    path,
    kind: request.kind,
    deleted: request.deleted ? 1 : 0,
    source: request.source,
    event: request.event,
    received_path: request.receivedPath ?? null,
    at: now,
  };
}

/** The folder's waiting item, if any (at most one: a unique index). */
export function pendingItem(tx: StoreTransaction, folder: string): ItemRow | undefined {
  return tx.rows.get<ItemRow>("SELECT * FROM items WHERE state = 'pending' AND folder = ?", [folder]);
}
