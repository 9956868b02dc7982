import { BadRequestError } from "../../core/errors.ts";
import type { EnqueuedItem, ScanRequest } from "../../core/scan.ts";
import type { Logger } from "../../core/logger.ts";
import { isAbsolutePath, normalizeSeparators, parentFolder, toNfc, withoutTrailingSlash } from "../../paths/normalize.ts";
import { resolvePriority, type ScanPriorities } from "../../paths/priority.ts";
import { lockItemWithFolders } from "./lock-item.ts";
import { mergeRefresh, refreshLevel } from "./refresh.ts";
import type { NewRequest, QueueTx } from "./queue-tx.ts";
import type { ItemRow } from "../store-rows.ts";

/**
 * Merging and delay, plex_autoscan's rules with its flaws fixed:
 * - one pending item per folder; a request for a waiting folder merges into it (lowest priority number kept, every
 *   request kept as a row for the log and history);
 * - a folder is due `delay` after its latest request, but never later than 3 × `delay` after its first, so a steady
 *   trickle of requests cannot starve it (plex_autoscan re-slept a full delay per merged request, without bound);
 * - the same request again (an *arr retrying its webhook) restarts the wait but adds no work;
 * - new work for a folder being scanned: that scan does not count for it (`rev`), and every target scans it again.
 * The folders of one call are locked in one order before any is read, so two writers never wait on each other in a
 * circle (PostgreSQL, several instances).
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

/**
 * The unit of work is the folder to scan. A file request scans its parent folder; a folder request scans the folder.
 * A path whose kind the sender could not say (`unknown`: a pasted manual path, `?path=`, plex_autoscan's queue) and
 * the disk could not tell either (see `resolve-kind.ts`) is scanned as given, as a folder naming itself: it is never
 * widened to its parent by guessing from its name (`The.Matrix.1999.1080p` and `Show.S01` are folders). The file check
 * still looks at the disk and scans a file's folder if that is what the path turns out to be.
 *
 * `folder` is the merge key, compared as stored: it is the folder in NFC, so two spellings of one folder (NFC from
 * Linux, NFD from a Mac) wait as one item. The key is never sent anywhere; what is scanned is spelled as found on disk,
 * or as first received (`file-check.ts`). `path` keeps the received bytes.
 */
export interface RequestFolder {
  /** The merge key: the folder to scan, NFC. */
  readonly folder: string;
  /** The folder to scan in the received bytes. */
  readonly receivedFolder: string;
  /** The path as requested, received bytes, separators tidied, no trailing `/` (the file to check for, or the folder). */
  readonly path: string;
  readonly treatedAs: "file" | "folder";
}

export function requestFolder(request: Pick<ScanRequest, "path" | "kind">): RequestFolder {
  const path = withoutTrailingSlash(normalizeSeparators(request.path));
  const treatedAs = request.kind === "file" ? "file" : "folder";
  const receivedFolder = treatedAs === "file" ? parentFolder(path) : path;
  return { folder: toNfc(receivedFolder), receivedFolder, path, treatedAs };
}

const KINDS: ReadonlySet<string> = new Set(["file", "folder", "unknown"]);

/** Every request names an absolute path of a known kind, or the batch is refused whole (`BadRequestError`: a 4xx). */
export function assertScannable(requests: readonly ScanRequest[]): void {
  const bad = requests.find((request) => !isAbsolutePath(request.path));
  if (bad) {
    throw new BadRequestError(`Scan path '${bad.path}' is not absolute; expected a full path such as /mnt/tv/Show`);
  }
  const odd = requests.find((request) => !KINDS.has(request.kind));
  if (odd) throw new BadRequestError(`Scan path '${odd.path}' has kind '${String(odd.kind)}'; expected file, folder or unknown`);
}

export async function enqueueRequests(tx: QueueTx, requests: readonly ScanRequest[], policy: MergePolicy): Promise<EnqueueOutcome> {
  const now = tx.now;
  const units = requests.map((request) => ({ request, unit: requestFolder(request) }));
  await tx.lockFolders([...new Set(units.map((u) => u.unit.folder))].sort());
  const items: EnqueuedItem[] = [];
  const events: EnqueueEvent[] = [];
  let earliestDue = Number.POSITIVE_INFINITY;
  for (const { request, unit } of units) {
    const existing = await tx.pendingItem(unit.folder);
    let item: ItemRow;
    if (existing) {
      const row = requestRow(existing.id, request, unit.path, now);
      const duplicate = await tx.hasRequest(row);
      item = { ...mergedItemRow(existing, row, duplicate, now, policy, request.priority), refresh: mergeRefresh(existing.refresh, request.refresh) };
      if (!duplicate) {
        await tx.addRequest(row);
        // Targets that already scanned the folder have not seen the new file: every target scans it again.
        await tx.clearTargets(existing.id);
      }
      await tx.updateItem(item);
    } else {
      item = await tx.insertItem({ ...newItemRow(unit.folder, now, policy, request.priority), refresh: refreshLevel(request.refresh) });
      await tx.addRequest(requestRow(item.id, request, unit.path, now));
    }
    items.push({ id: item.id, folder: unit.folder, merged: existing !== undefined });
    events.push({ request, itemId: item.id, folder: unit.folder, merged: existing !== undefined, dueAt: item.due_at });
    earliestDue = Math.min(earliestDue, Math.max(item.due_at, item.next_at));
  }
  return { at: now, items, events, earliestDue };
}

/** A new waiting folder (its first request is stored beside it). */
/**
 * A path of unknown kind (a manual request, `?path=`) waits keyed by the path itself, never widened by guessing from
 * its name. Once a look at the disk finds it is a file, its requests arrive at the file's folder, at `arrivedAt`: they
 * join the folder's waiting item (merged as any request for it is), or the item becomes that folder's. Six manual
 * requests for the files of one season become one scan however late the files reach the disk. `arrivedAt` is the
 * request's own time when the look came right after it (the wait is the one it was given), and the store's time when
 * a file check found the file later (the folder then waits a merge delay for the season's other files). Answers the
 * item the requests wait in now, or nothing when the item changed meanwhile (another request told its kind).
 */
export async function moveToFolder(
  tx: QueueTx,
  id: number,
  folder: string,
  arrivedAt: number,
  policy: MergePolicy,
): Promise<{ readonly id: number; readonly merged: boolean; readonly dueAt: number } | undefined> {
  const item = await lockItemWithFolders(tx, id, [folder]);
  if (item?.state !== "pending" || item.folder === folder || !(await tx.onlyUnknownRequests(id))) return undefined;
  const waiting = await tx.pendingItem(folder);
  if (waiting) {
    await tx.moveRequests(id, waiting.id);
    await tx.deleteItem(id);
    // New work for the folder: every target scans it again, a scan already running does not count for it.
    await tx.clearTargets(waiting.id);
    const merged: ItemRow = {
      ...waiting,
      refresh: Math.max(waiting.refresh ?? 0, item.refresh ?? 0),
      last_at: Math.max(waiting.last_at, arrivedAt),
      due_at: Math.max(waiting.due_at, Math.min(arrivedAt + policy.delayMs, waiting.first_at + 3 * policy.delayMs)),
      rev: waiting.rev + 1,
      scan_folder: null,
      files: null,
      checks: 0,
    };
    await tx.updateItem(merged);
    return { id: waiting.id, merged: true, dueAt: merged.due_at };
  }
  const became: ItemRow = {
    ...item,
    folder,
    priority: resolvePriority(folder, policy.priorities),
    due_at: Math.max(item.due_at, arrivedAt + policy.delayMs),
    next_at: 0,
    rev: item.rev + 1,
    scan_folder: null,
    files: null,
    checks: 0,
  };
  await tx.updateItem(became);
  return { id, merged: false, dueAt: became.due_at };
}

function newItemRow(folder: string, now: number, policy: MergePolicy, priority?: number): Omit<ItemRow, "id"> {
  return {
    folder,
    state: "pending",
    priority: priority ?? resolvePriority(folder, policy.priorities),
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

/**
 * A waiting folder after one more request: the lowest priority kept, the wait restarted within the 3 × delay cap, and
 * (unless it is the same request again) new work: a scan already running does not count for it, and its files are
 * checked again (a deletion needs no file, so it leaves the checks as they were).
 */
function mergedItemRow(item: ItemRow, row: NewRequest, duplicate: boolean, now: number, policy: MergePolicy, priority?: number): ItemRow {
  return {
    ...item,
    priority: Math.min(item.priority, priority ?? resolvePriority(item.folder, policy.priorities)),
    last_at: now,
    due_at: Math.max(item.due_at, Math.min(now + policy.delayMs, item.first_at + 3 * policy.delayMs)),
    ...(duplicate ? {} : { rev: item.rev + 1, scan_folder: null, files: null, checks: row.deleted ? item.checks : 0 }),
  };
}

function requestRow(itemId: number, request: ScanRequest, path: string, now: number): NewRequest {
  return {
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

/**
 * One INFO line per folder a batch queued (a 12-track album is one line), with the item's id as `[<id>]`; each
 * request on its own at DEBUG.
 */
export function logIntake(log: Logger, events: readonly EnqueueEvent[], at: number, origin: string | undefined): void {
  const byItem = new Map<number, EnqueueEvent[]>();
  for (const event of events) {
    const group = byItem.get(event.itemId);
    if (group) group.push(event);
    else byItem.set(event.itemId, [event]);
  }
  for (const [id, group] of byItem) {
    const first = group[0] as EnqueueEvent;
    const { request, folder } = first;
    for (const event of group) {
      const { path, kind, receivedPath } = event.request;
      log.debug({ id, path, kind, ...(receivedPath && receivedPath !== path ? { receivedPath } : {}) }, `Request for '${path}'.`);
    }
    const due = Math.max(0, Math.round((Math.max(...group.map((e) => e.dueAt)) - at) / 1000));
    const noun = group.every((e) => e.request.kind === "file") ? "files" : "paths";
    const what = group.length === 1 ? `'${request.path}'` : `${group.length} ${noun} in '${folder}'`;
    const deleted = group.every((e) => e.request.deleted) ? " (deleted)" : "";
    const from = origin ? ` from ${origin}` : "";
    // Merged when the folder was already waiting before this batch (the batch's own first request made it otherwise).
    const merged = first.merged ? ", merged into the waiting scan" : "";
    log.info(
      { id, source: request.source, event: request.event, folder, requests: group.length },
      `Queued ${request.source} '${request.event}'${from}: ${what}${deleted}${merged}; scan in ${due} s.`,
    );
  }
}
