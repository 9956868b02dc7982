import type { Clock } from "../core/clock.ts";
import { describeError } from "../core/errors.ts";

/**
 * What the Drive monitor has been doing, for the console's Drive page: kept in memory as it happens (a few numbers and
 * the last five errors), so reading it costs nothing and asks Google nothing. "Today" is the UTC day of the monitor's
 * clock; its counters start again at midnight. Every message kept passes through `redact` first (the tokens and keys
 * the credentials registered), and is cut to one line: the page shows it as it is.
 */
export interface DriveMonitorStatus {
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

export interface MonitorStatusOptions {
  readonly clock: Clock;
  readonly pollIntervalMs: number;
  /** The access method as the configuration says it (shown before the first connection, and after). */
  readonly access?: string;
  /** The drives asked for, shown until the first connection resolves them. */
  readonly drives: readonly string[];
  /** Removes secrets from a message (the log scrubber's); identity when not given. */
  readonly redact?: (text: string) => string;
}

export interface Connected {
  readonly description: string;
  readonly drives: readonly string[];
  readonly tokenExpiresAt?: () => number | undefined;
}

export interface MonitorStatusRecorder {
  connected(connection: Connected): void;
  pollStarted(): void;
  /** One page of a feed was handled: `scans` requests were accepted by the queue. */
  page(changes: number, scans: number): void;
  pollSucceeded(): void;
  pollFailed(error: unknown): void;
  nextPollAt(at: number | undefined): void;
  /** Monitoring stopped for good; `reason` names the fix. */
  failed(reason: string): void;
  snapshot(state: DriveMonitorStatus["state"]): DriveMonitorStatus;
}

const DAY_MS = 86_400_000;
const KEPT_ERRORS = 5;
const MAX_MESSAGE = 500;

export function createMonitorStatus(options: MonitorStatusOptions): MonitorStatusRecorder {
  const { clock } = options;
  const redact = options.redact ?? ((text: string) => text);
  let connection: Connected | undefined;
  let day = dayOf(clock.now());
  let today = { changes: 0, scansQueued: 0 };
  let poll = { changes: 0, scans: 0 };
  let lastPoll: DriveMonitorStatus["lastPoll"];
  let lastScanQueuedAt: number | undefined;
  let nextPollAt: number | undefined;
  let failuresInARow = 0;
  let reason: string | undefined;
  const errors: { at: number; message: string }[] = [];

  /** Starts a new "today" when the clock passed UTC midnight since the last look. */
  function rollDay(now: number): void {
    const current = dayOf(now);
    if (current === day) return;
    day = current;
    today = { changes: 0, scansQueued: 0 };
  }

  function words(text: string): string {
    const line = redact(text).replace(/\s+/g, " ").trim();
    return line.length > MAX_MESSAGE ? `${line.slice(0, MAX_MESSAGE - 1)}…` : line;
  }

  return {
    connected(next) {
      connection = next;
    },
    pollStarted() {
      poll = { changes: 0, scans: 0 };
    },
    page(changes, scans) {
      const now = clock.now();
      rollDay(now);
      poll.changes += changes;
      poll.scans += scans;
      today.changes += changes;
      today.scansQueued += scans;
      if (scans > 0) lastScanQueuedAt = now;
    },
    pollSucceeded() {
      failuresInARow = 0;
      lastPoll = { at: clock.now(), ok: true, detail: describePoll(poll) };
    },
    pollFailed(error) {
      const at = clock.now();
      const message = words(describeError(error)) || "unknown error";
      failuresInARow++;
      // Pages handled before the failure were committed: say so beside the error.
      const before = poll.changes > 0 ? ` (after ${describePoll(poll)})` : "";
      lastPoll = { at, ok: false, detail: `${message}${before}` };
      errors.unshift({ at, message });
      errors.length = Math.min(errors.length, KEPT_ERRORS);
    },
    nextPollAt(at) {
      nextPollAt = at;
    },
    failed(why) {
      reason = words(why);
      nextPollAt = undefined;
    },
    snapshot(state) {
      rollDay(clock.now());
      const access = options.access ?? connection?.description ?? "not connected yet";
      const account = connection && connection.description !== access ? connection.description : undefined;
      const running = state === "running" || state === "starting";
      return {
        access,
        account,
        state,
        reason: state === "failed" ? reason : undefined,
        tokenExpiresAt: connection?.tokenExpiresAt?.(),
        pollIntervalMs: options.pollIntervalMs,
        lastPoll,
        nextPollAt: running ? nextPollAt : undefined,
        failuresInARow,
        today: { ...today },
        lastScanQueuedAt,
        drives: connection?.drives ?? options.drives,
        errors: errors.map((error) => ({ ...error })),
      };
    },
  };
}

/** "12 changes, 2 scans queued", "no changes". */
function describePoll(poll: { changes: number; scans: number }): string {
  if (poll.changes === 0) return "no changes";
  const changes = `${poll.changes} change${poll.changes === 1 ? "" : "s"}`;
  return `${changes}, ${poll.scans} scan${poll.scans === 1 ? "" : "s"} queued`;
}

function dayOf(ms: number): number {
  return Math.floor(ms / DAY_MS);
}
