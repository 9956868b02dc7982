import type { RefreshWish } from "./scan.ts";

/**
 * The port the dispatcher talks to. Plex (HTTP API or the scanner inside its container) implements it; tests use a
 * small fake. A target gets one folder in the media server's own path form.
 *
 * Errors a target may throw, and what the dispatcher does with them:
 * - `TargetUnavailableError`: the server is down or busy → retry later with backoff.
 * - `TargetAuthError`: the server rejected our credentials → retry slowly, log loudly.
 * - anything else: the scan failed → retry with backoff, then `failed`.
 */
export interface Target {
  /** Short, stable name used in logs and in the queue's per-target records: `plex`, `plex-scanner`. */
  readonly name: string;
  scan(folder: string, context: ScanContext): Promise<ScanOutcome>;
  /** Cheap check that the target can take work now; `false` makes the dispatcher hold work for it. */
  isAvailable(): Promise<boolean>;
  /** Asks the server's library whether requested files are there after a scan; absent = it cannot be asked. */
  readonly lookup?: LibraryLookup;
  /** Re-reads the items of files its library holds (refresh in place); absent = the target cannot refresh one item. */
  readonly refresher?: ItemRefresher;
}

/**
 * Refresh in place: the items holding `files` are re-read one by one (never a library or a section), after the landed
 * check saw them. Errors as for `scan` (`TargetUnavailableError`: not now); an item not found is a value, not an error.
 */
export interface ItemRefresher {
  refresh(files: readonly string[], wish: RefreshWish, signal: AbortSignal): Promise<RefreshOutcome>;
}

export interface RefreshOutcome {
  /** Items re-read (each once, however many of `files` it holds). */
  readonly refreshed: number;
  /** Files whose item could not be found. */
  readonly missing: readonly string[];
  /** What was sent, for History: `metadata refreshed and analyzed (item 1234)`. */
  readonly detail: string;
}

/**
 * Did the files land? The server's own API, asked after its scan of a folder (never the disks). Errors as for `scan`:
 * `TargetUnavailableError` = cannot be asked now (looked up again later); anything else = the lookup failed.
 */
export interface LibraryLookup {
  /** How long after a scan was sent the first look waits: the server's own delay before it acts (Jellyfin's
   *  LibraryMonitorDelay), 0 where the lookup itself waits for the scan to end (Plex's section activity). */
  readonly settleMs: number;
  /** For each file (server form, as the scan got it), whether the server's library holds it now. */
  find(files: readonly string[], signal: AbortSignal): Promise<ReadonlyMap<string, boolean>>;
}

export interface ScanContext {
  /** The queue item's id: log lines about this scan carry it as `id` (the `[<id>]` of the classic line). */
  readonly id?: number;
  /** Everyone who asked for this folder (merged requests); `deleted` when the sender said the file is gone. */
  readonly sources: readonly { source: string; event: string; path: string; deleted?: boolean }[];
  /** The files that were requested inside the folder (server form), for analysis after the scan. */
  readonly files: readonly string[];
  readonly priority: number;
  /** 1 for the first try. */
  readonly attempt: number;
  /** Aborted on shutdown; a long scan should give up at its next step. */
  readonly signal: AbortSignal;
  /**
   * A refresh in place was asked for the folder's files (`RefreshWish`). The landed check sends it once the scan has
   * ended; a scan route that would itself re-read what the server holds may take it as leave to do so.
   */
  readonly refresh?: RefreshWish;
}

/** Expected outcomes are values: a folder in no library is a logged skip, not an error. */
export type ScanOutcome =
  | { readonly status: "scanned"; readonly detail?: string }
  | { readonly status: "skipped"; readonly reason: string };
