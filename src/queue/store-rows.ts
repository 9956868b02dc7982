import type { RefreshState } from "./rules/refresh.ts";

/**
 * The queue's rows, as both stores keep them (the embedded store in SQLite tables, PostgreSQL in its own): one row per
 * folder to scan (`items`: `pending` rows are the queue, at most one per folder; `done` and `failed` rows the
 * history), every request that merged into a folder (`requests`), every target that finished a folder
 * (`item_targets`). Times are milliseconds since the epoch, on the store's clock.
 */
export type ItemState = "pending" | "done" | "failed";

export interface ItemRow {
  readonly id: number;
  readonly folder: string;
  readonly state: ItemState;
  readonly priority: number;
  /** First request for the folder (the oldest-first order and the 3 × delay cap count from it). */
  readonly first_at: number;
  readonly last_at: number;
  /** When the scan delay is over. */
  readonly due_at: number;
  /** Not before this time: the next file check, or a retry after a failure (0 = no extra wait). */
  readonly next_at: number;
  /** Bumped by every request that adds work, so a scan that started earlier does not count for it. */
  readonly rev: number;
  readonly checks: number;
  /** Set once the file checks passed: the folder the targets get. */
  readonly scan_folder: string | null;
  /** JSON list of the requested files found on disk (server form), set with `scan_folder`. */
  readonly files: string | null;
  /** Failed scan attempts (the retry backoff grows with them). */
  readonly attempts: number;
  /**
   * Attempts in a row that started and never recorded an outcome (the process died during them): counted before
   * each attempt starts, so a scan that takes the process down still counts, and bounded.
   */
  readonly unfinished: number;
  readonly first_failed_at: number | null;
  readonly last_error: string | null;
  readonly finished_at: number | null;
  /** Requests let go when the folder finished (it keeps its first ones). */
  readonly requests_dropped: number;
  /** Refresh in place asked by any of its requests (`rules/refresh.ts`: 0 none, 1 metadata, 2 metadata and streams);
   *  absent in records written before the column existed. */
  readonly refresh?: number;
}

export interface RequestRow {
  readonly id: number;
  readonly item_id: number;
  readonly path: string;
  readonly kind: "file" | "folder" | "unknown";
  readonly deleted: 0 | 1;
  readonly source: string;
  readonly event: string;
  readonly received_path: string | null;
  readonly at: number;
}

/** A target's delivery of a folder that failed: it waits (`next_at`) or was given up (`failed`). */
export interface DeliveryRow {
  readonly item_id: number;
  readonly target: string;
  readonly attempts: number;
  readonly next_at: number;
  readonly first_failed_at: number;
  readonly last_error: string;
  readonly failed: 0 | 1;
}

export interface TargetRow {
  readonly item_id: number;
  readonly target: string;
  readonly status: "scanned" | "skipped";
  readonly detail: string | null;
  readonly at: number;
  /** Whether the server's library shows the requested files since (`rules/landed.ts`); null: not asked (a skip, or a
   *  row from before the check existed). */
  readonly landed?: LandedState | null;
  /** Why not visible or not checked; while pending, the files not visible yet. */
  readonly landed_detail?: string | null;
  /** From the folder's first request to the look that saw every file. */
  readonly landed_after_ms?: number | null;
  /** Pending: when the next look is due. */
  readonly landed_check_at?: number | null;
  /** Looks done so far. */
  readonly landed_looks?: number | null;
  /** Refresh in place (`rules/refresh.ts`): `refreshed` or `not_refreshed`; null: not asked, or not done yet. */
  readonly refresh?: RefreshState | null;
  /** What was sent, or why not. */
  readonly refresh_detail?: string | null;
}

/** `pending` (a look is due at `landed_check_at`), `landed`, `not_visible`, `not_checked`. */
export type LandedState = "pending" | "landed" | "not_visible" | "not_checked";
