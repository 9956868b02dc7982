import type { PathKind, RefreshWish } from "./scan.ts";

/**
 * The queue as people and scripts read it (the console, the API): one folder with its requests and each target's
 * result. The queue module produces these; the web shows them.
 */
type ItemState = "pending" | "done" | "failed";

/** One folder in the queue or the history, as the web page and the API show it. Times are ms since the epoch. */
export interface QueueItemView {
  readonly id: number;
  readonly folder: string;
  readonly state: ItemState;
  readonly priority: number;
  readonly firstRequestAt: number;
  readonly lastRequestAt: number;
  /** When the scan delay is (or was) over. */
  readonly dueAt: number;
  /** A pending item waiting for a file check or a retry: not before this time. */
  readonly nextAttemptAt?: number;
  readonly fileChecks: number;
  readonly attempts: number;
  readonly scanFolder?: string;
  readonly lastError?: string;
  readonly finishedAt?: number;
  readonly requests: readonly RequestView[];
  /** Requests a finished folder let go of (it keeps its first ones). */
  readonly requestsDropped: number;
  /** Refresh in place asked by any of its requests: `metadata`, or `file` (metadata and streams). */
  readonly refresh?: RefreshWish;
  /** The targets that finished this folder (a retry re-sends only to the others). */
  readonly targets: readonly TargetView[];
  /** Targets that failed this folder: each waits on its own (`nextAttemptAt`), or was given up (`failed`). */
  readonly deliveries: readonly DeliveryView[];
}

export interface DeliveryView {
  readonly target: string;
  readonly attempts: number;
  /** Not sent to this target before then (absent once given up). */
  readonly nextAttemptAt?: number;
  readonly lastError: string;
  readonly failed: boolean;
}

export interface RequestView {
  readonly path: string;
  readonly kind: PathKind;
  readonly deleted: boolean;
  readonly source: string;
  readonly event: string;
  readonly receivedPath?: string;
  readonly at: number;
}

export interface TargetView {
  readonly target: string;
  readonly status: "scanned" | "skipped";
  readonly detail?: string;
  readonly at: number;
  /**
   * Whether the target's library shows the requested files since its scan: `pending` (a look is to come), `landed`,
   * `not_visible` or `not_checked`; absent for a skip (or a scan from before the check existed).
   */
  readonly landed?: "pending" | "landed" | "not_visible" | "not_checked";
  /** Landed: from the folder's first request to the look that saw every file. */
  readonly landedAfterMs?: number;
  /** Not visible or not checked: why. Pending: the files not visible yet. */
  readonly landedReason?: string;
  /** Pending: when the next look is due. */
  readonly landedCheckAt?: number;
  /** Pending: the looks already taken that missed files (0 before the first; 2 once a rescan of them was queued). */
  readonly landedLooks?: number;
  /** Refresh in place once the files were seen: `refreshed`, or `not_refreshed` (`refreshDetail` says why); absent:
   *  none was asked, or the look has not seen the files yet. */
  readonly refresh?: "refreshed" | "not_refreshed";
  /** What was sent, or why not. */
  readonly refreshDetail?: string;
}

export interface PageOptions {
  readonly limit?: number;
  readonly offset?: number;
}

/** The history's filters (the console's History page, `cmd=history`). */
export interface HistoryQuery extends PageOptions {
  readonly state?: "done" | "failed";
  /** A request's source, exactly as stored (`Sonarr`, `Radarr (4k)`, `Manual`, `Google Drive`). */
  readonly source?: string;
  /** Part of the folder or of a request's path (ASCII letters match either case). */
  readonly search?: string;
  /** Folders with a target delivery in this landed state (`not_visible`: files a server never showed). */
  readonly landed?: "pending" | "landed" | "not_visible" | "not_checked";
}


const LANDED_STATES = ["pending", "landed", "not_visible", "not_checked"] as const;

/** The history's landed filter from a query parameter (`not_visible`, or `not-visible`); `undefined` for anything else. */
export function landedFilter(value: string | undefined): HistoryQuery["landed"] {
  const wanted = value?.trim().toLowerCase().replace(/[- ]/g, "_");
  return LANDED_STATES.find((state) => state === wanted);
}
