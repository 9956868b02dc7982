/**
 * The glossary of a scan request. Every intake (webhooks, manual requests, the Google Drive monitor) turns what it
 * received into `ScanRequest`s and hands them to one `ScanSink`; nothing upstream knows what happens downstream.
 */

/** What a request's path names, as far as the sender told us. `unknown` lets the queue decide from the disk. */
export type PathKind = "file" | "folder" | "unknown";

export interface ScanRequest {
  /**
   * Absolute path in the media server's own form: the prefix put through `SERVER_PATH_MAPPINGS` (spelled as in the
   * config), the rest in the exact bytes it was received with — never Unicode-normalised, since Linux compares names
   * byte for byte. Compare paths with `normalizePath` (NFC); send them as they are.
   */
  readonly path: string;
  readonly kind: PathKind;
  /** Who asked, as users read it in the log: `Sonarr`, `Radarr (4k)`, `Manual`, `Google Drive`. */
  readonly source: string;
  /** The sender's event: `Download`, `Upgrade`, `Rename`, `EpisodeFileDelete`, `Manual` … */
  readonly event: string;
  /** The sender told us the file is gone: the dispatcher skips the existence check and scans the folder. */
  readonly deleted?: boolean;
  /** The path as it was received, before mapping (for logs and the manual page). */
  readonly receivedPath?: string;
  /** The sender's own priority (a watcher's `PRIORITY`); absent: `SERVER_SCAN_PRIORITIES` decides by the folder. */
  readonly priority?: number;
  /**
   * The sender asks for the named item to be re-read after its scan, not only scanned (`RefreshWish`): an upgrade or
   * rename from the *arr apps, `refresh=1` on a manual request (Bazarr, Tdarr), the console's Refresh.
   */
  readonly refresh?: RefreshWish;
}

/**
 * What a refresh re-reads once the scan has ended and the item is visible: `metadata` (the item's metadata, local
 * subtitles and artwork: a rename, a subtitle added beside the file), or `file` (the file was replaced in place: an
 * upgrade that kept the name, a transcode; its streams are re-read too, Plex's analyze).
 */
export type RefreshWish = "metadata" | "file";

/** What the queue answers once a batch is durable. */
export interface EnqueueResult {
  /** One entry per request, in order. */
  readonly items: readonly EnqueuedItem[];
}

export interface EnqueuedItem {
  /** The queue item's id: the `[<id>]` of every log line about this folder, from intake to the target's answer. */
  readonly id?: number;
  /** The folder the request waits under: its merge key, in NFC (what is scanned is spelled as found on disk, or as
   *  first received). */
  readonly folder: string;
  /** True when the folder was already waiting and this request merged into it. */
  readonly merged: boolean;
}

/**
 * Hands scan requests to whoever stores them. When the promise resolves the requests are on disk: a caller may
 * answer 2xx. When it rejects nothing was stored and the caller must answer 5xx (or retry).
 */
export type ScanSink = (requests: readonly ScanRequest[], options?: ScanSinkOptions) => Promise<EnqueueResult>;

export interface ScanSinkOptions {
  /**
   * The caller stops waiting: requests not yet taken by the store are dropped and the promise rejects (nothing was
   * stored). Requests already on their way to the disk are not dropped; the promise tells how that ended.
   */
  readonly signal?: AbortSignal;
  /** Who sent the requests, for the intake log line (`client '192.168.1.20'`). */
  readonly origin?: string;
  /** The user saw where the path lands and asked for it anyway (the Scan page's "Queue anyway"): queued as it is. */
  readonly confirmed?: boolean;
}
