import type { PathKind, RefreshWish } from "../../core/scan.ts";
import type { ScanOutcome } from "../../core/target.ts";
import type { LandedStart } from "../rules/landed.ts";

/**
 * The narrow view of the queue the dispatcher works through. Every method that changes an item takes the item's
 * `rev` as the dispatcher saw it: a result for an item that received new work in the meantime does not count (the
 * new work restarted its wait, and every target will scan it again).
 */
export interface WorkRequest {
  readonly path: string;
  readonly kind: PathKind;
  readonly deleted: boolean;
  readonly source: string;
  readonly event: string;
}

export interface WorkItem {
  readonly id: number;
  readonly rev: number;
  /** The merge key: the folder the requests resolved to, in NFC (never sent anywhere: see `scanFolder`). */
  readonly folder: string;
  /** Set once the file checks passed: what the targets scan. */
  readonly scanFolder?: string;
  /** Requested files found on disk (server form). */
  readonly files: readonly string[];
  readonly priority: number;
  /** When the folder's first request arrived (ms since the epoch), for the request-to-scan time. */
  readonly firstAt?: number;
  readonly checks: number;
  readonly attempts: number;
  readonly requests: readonly WorkRequest[];
  /** Refresh in place asked by any of its requests (`rules/refresh.ts`), done after the landed look. */
  readonly refresh?: RefreshWish;
}

export type CheckResult =
  | { readonly kind: "ready"; readonly checks: number; readonly scanFolder: string; readonly files: readonly string[] }
  /** Look again in `waitMs` (the store adds it to its own clock: the database's, with PostgreSQL). */
  | { readonly kind: "wait"; readonly checks: number; readonly waitMs: number }
  | { readonly kind: "failed"; readonly checks: number; readonly reason: string };

export interface FailureRecord {
  readonly error: string;
  /** In how long this target may be sent the folder again (the delivery's own backoff, which a target coming back
   *  does not reset); the store adds it to its own clock. */
  readonly retryInMs: number;
  /** A delivery that has been failing for longer than this is given up. */
  readonly retryMaxMs: number;
}

/** What `beginAttempt` found: go ahead (with the attempt's number), or the item was given up. */
export type AttemptStart =
  | { readonly go: true; readonly attempt: number }
  | { readonly go: false; readonly reason: string };

export interface DispatchQueue {
  /**
   * Due items whose files have not been checked yet, in dispatch order, leaving out `skip` (in progress). With several
   * instances on one database, the items answered are claimed for this instance (see `postgres/claims.ts`): another
   * instance does not get them while this one holds them.
   */
  dueForCheck(now: number, limit: number, skip: ReadonlySet<number>): Promise<WorkItem[]>;
  /** Due, checked items that `target` has not scanned yet and whose delivery to it does not wait (a failed one's
   *  backoff), in dispatch order (priority, then oldest). */
  dueForTarget(target: string, now: number, limit: number, skip: ReadonlySet<number>): Promise<WorkItem[]>;
  /** The earliest time after `now` at which a pending item may become due (a hint; waking early is harmless). */
  nextWakeAt(now: number): Promise<number | undefined>;
  recordCheck(id: number, rev: number, result: CheckResult): Promise<void>;
  /**
   * Marks an attempt as started, on disk before it starts (a scan that kills the process still counts). An item
   * whose last attempts all started and never ended is given up instead. `undefined`: the item is gone or has new
   * work. `targets`: how many targets the folder fans out to (each starts an attempt of its own, so the limit on
   * attempts that never ended is per target; default 1).
   */
  beginAttempt(id: number, rev: number, targets?: number): Promise<AttemptStart | undefined>;
  /** Returns `undefined` for a stale or removed item, else whether the item is now complete. */
  recordScan(
    id: number,
    rev: number,
    target: string,
    outcome: ScanOutcome,
    allTargets: readonly string[],
    /** How the check that the files landed starts (absent: no check, as for a skip). */
    landed?: LandedStart,
  ): Promise<{ readonly completed: boolean } | undefined>;
  /**
   * Records `target`'s failed attempt: that delivery alone waits (stored, so a restart keeps its backoff) while the
   * other targets go on; returns whether the delivery was given up now (the folder is `failed` once the other
   * targets are through with it). A failure of a scan that started before new work arrived (another `rev`) only
   * closes its attempt: the new work keeps its own schedule.
   */
  recordFailure(
    id: number,
    rev: number,
    target: string,
    failure: FailureRecord,
    allTargets: readonly string[],
  ): Promise<{ readonly failed: boolean }>;
  /** An attempt was cut off by a shutdown: it did not fail, and it did not crash the process. */
  recordInterrupted(id: number): Promise<void>;
  /** Gives up `target`'s deliveries that have failed for `waitedMs` or longer (it has been down all that time; measured
   *  on the store's clock). A folder it never tried (held for an anchor, or a mount) is not failed by this. */
  failWaitingFor(target: string, waitedMs: number, reason: string, allTargets: readonly string[]): Promise<number>;
  pendingCount(): Promise<number>;
  /**
   * Several instances: this one lets go of its claim on the folder (it waits here for an anchor that another
   * instance's disk may have). Absent for one process.
   */
  release?(id: number): Promise<void>;
  /** Whether the store takes writes now (from memory); while it does not, the dispatcher starts nothing. */
  writable(): boolean;
  /** Called with the earliest time new work may be due, after each enqueue or retry. Returns an unsubscribe. */
  onWork(listener: (earliest: number) => void): () => void;
}
