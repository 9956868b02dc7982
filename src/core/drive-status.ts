/**
 * What the Google Drive monitor has been doing (src/drive/monitor-status.ts keeps it), as the console's Drive page
 * shows it. Times are ms since the epoch.
 */
export interface DriveStatus {
  /** How the monitor reaches Google, in words (`OAuth token stored by autoscan authorize (…)`, `service account …`). */
  readonly access: string;
  /** The credentials as Google knows them once connected (`OAuth client 123….apps.googleusercontent.com`), when not the same as `access`. */
  readonly account?: string;
  /** `standby`: another instance shares the database and polls (the monitor's wrapper in src/cluster says so). */
  readonly state: "idle" | "starting" | "running" | "stopped" | "failed" | "standby";
  /** While `standby`: the instance that polls Google Drive, when known. */
  readonly activeInstance?: string;
  /** Why monitoring stopped for good, with the fix (state `failed`). */
  readonly reason?: string;
  /** When the current access token expires (ms since the epoch), when known. */
  readonly tokenExpiresAt?: number;
  readonly pollIntervalMs: number;
  readonly lastPoll?: { readonly at: number; readonly ok: boolean; readonly detail?: string };
  /** When the next poll is due (ms since the epoch), while the monitor runs. */
  readonly nextPollAt?: number;
  /** Failed polls since the last good one. */
  readonly failuresInARow?: number;
  readonly today: { readonly changes: number; readonly scansQueued: number };
  /** When the monitor last handed a scan to the queue. */
  readonly lastScanQueuedAt?: number;
  /** The feeds polled: `My Drive` and the shared drives' names (before the first connection: the configured names). */
  readonly drives: readonly string[];
  /** Newest first, five at most. */
  readonly errors: readonly { readonly at: number; readonly message: string }[];
}
