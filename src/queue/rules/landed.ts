import type { QueueTx } from "./queue-tx.ts";
import type { TargetRow } from "../store-rows.ts";
import type { RefreshRecord } from "./refresh.ts";

/**
 * Did the files land? Per (folder, target): after the target scanned the folder, its library is asked for the files the
 * requests named (`landed/landed-checker.ts` asks; these rules store what it found, once for both stores). The outcome
 * lives on the target's delivery row (`item_targets`): `pending` with the time of the next look, then `landed` (with
 * the time from the first request to the look that saw every file), `not_visible` (with the reason), or `not_checked`
 * (why it could not be asked).
 */

/** How a delivery's check starts, decided when its scan is recorded. */
export type LandedStart =
  | { readonly look: true; readonly inMs: number }
  | { readonly look: false; readonly reason: string };

/** What a look found, as the checker decided it. */
export type LookRecord =
  /** `refresh`: what refresh in place did once every file was seen (absent: none was asked). */
  | { readonly kind: "landed"; readonly afterMs: number; readonly refresh?: RefreshRecord }
  /** Not every file is visible yet: look again in `inMs` (`missing` names them, for the console). */
  | { readonly kind: "again"; readonly inMs: number; readonly missing: string; readonly looked: boolean }
  | { readonly kind: "not_visible"; readonly reason: string; readonly refresh?: RefreshRecord }
  | { readonly kind: "not_checked"; readonly reason: string; readonly refresh?: RefreshRecord };

/** A look the checker may take now. */
export interface ClaimedLook {
  readonly row: TargetRow;
  /** Looks done before this one. */
  readonly looks: number;
}

/**
 * The request a look that still misses files after the recheck queues for them: a scan like any other (the scan
 * delay, the anchors, a hung mount, the file check, the target's own wait and retries), so a file not visible because
 * its mount is away is not rescanned onto a missing mount. Its own scans get no look: the look that asked for it
 * looks a last time once the target has scanned it.
 */
export const RESCAN_REQUEST = { source: "Landed check", event: "Rescan" } as const;

export function isRescanRequest(request: { readonly source: string; readonly event: string }): boolean {
  return request.source === RESCAN_REQUEST.source && request.event === RESCAN_REQUEST.event;
}

/**
 * Whether a request named a file the landed check looks for: a file, or a path of unknown kind under the folder (the
 * file check found it to be a file and moved it to its folder).
 */
export function namesFile(request: { readonly path: string; readonly kind: string }, folder: string): boolean {
  return request.kind === "file" || (request.kind === "unknown" && request.path.normalize("NFC") !== folder.normalize("NFC"));
}

/**
 * The landed columns of a target row whose scan is being recorded. A folder that asked for a refresh in place
 * (`refreshAsked`) but gets no look is told at once why it is not refreshed: the refresh needs the item a look finds.
 */
export function landedColumns(start: LandedStart | undefined, now: number, refreshAsked = false): Partial<TargetRow> {
  if (start === undefined) return {};
  if (start.look) return { landed: "pending", landed_check_at: now + start.inMs, landed_looks: 0 };
  const why = start.reason === "the request named a folder only"
    ? "the request named a folder: a refresh re-reads the item of a file, so send the file's path"
    : `the item cannot be looked up: ${start.reason}`;
  return { landed: "not_checked", landed_detail: start.reason, ...(refreshAsked ? { refresh: "not_refreshed" as const, refresh_detail: why } : {}) };
}

/**
 * Takes a due look: it stays the checker's for `leaseMs` (a look cut off by a stop or a crash is taken again after
 * that). `undefined`: not pending, not due yet, or another instance has it.
 */
export async function claimLook(tx: QueueTx, itemId: number, target: string, leaseMs: number): Promise<ClaimedLook | undefined> {
  const row = await tx.target(itemId, target);
  if (row?.landed !== "pending" || (row.landed_check_at ?? 0) > tx.now) return undefined;
  await tx.putTarget({ ...row, landed_check_at: tx.now + leaseMs });
  return { row, looks: row.landed_looks ?? 0 };
}

/** Stores a look's outcome; `false` when the row is gone (the history was pruned) or no longer pending. */
export async function recordLook(tx: QueueTx, itemId: number, target: string, look: LookRecord): Promise<boolean> {
  const row = await tx.target(itemId, target);
  if (row?.landed !== "pending") return false;
  const looks = row.landed_looks ?? 0;
  switch (look.kind) {
    case "landed":
      await tx.putTarget({
        ...row,
        landed: "landed",
        landed_after_ms: look.afterMs,
        landed_detail: null,
        landed_check_at: null,
        landed_looks: looks + 1,
        ...refreshColumns(look.refresh),
      });
      break;
    case "again":
      await tx.putTarget({
        ...row,
        landed_detail: look.missing,
        landed_check_at: tx.now + look.inMs,
        landed_looks: looks + (look.looked ? 1 : 0),
      });
      break;
    case "not_visible":
    case "not_checked":
      await tx.putTarget({ ...row, landed: look.kind, landed_detail: look.reason, landed_check_at: null, landed_looks: looks + 1, ...refreshColumns(look.refresh) });
      break;
  }
  return true;
}

function refreshColumns(refresh: RefreshRecord | undefined): Partial<TargetRow> {
  return refresh ? { refresh: refresh.state, refresh_detail: refresh.detail } : {};
}
