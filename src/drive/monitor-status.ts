import type { Clock } from "../core/clock.ts";
import type { DriveStatus } from "../core/drive-status.ts";
import { describeError } from "../core/errors.ts";

/**
 * What the Drive monitor has been doing, for the console's Drive page (`DriveStatus`): kept in memory as it happens
 * (a few numbers and the last five errors), so reading it costs nothing and asks Google nothing. "Today" is the UTC
 * day of the monitor's clock; its counters start again at midnight. Every message kept passes through `redact` first
 * (the tokens and keys the credentials registered), and is cut to one line: the page shows it as it is.
 */
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
  snapshot(state: DriveStatus["state"]): DriveStatus;
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
  let lastPoll: DriveStatus["lastPoll"];
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
