import type { Config, NotifierConfig } from "../config/schema.ts";
import type { Clock } from "../core/clock.ts";
import type { Logger } from "../core/logger.ts";
import type { NotifyEvent, NotifySink } from "../core/notify-event.ts";
import type { ScanSink } from "../core/scan.ts";
import { formatDuration } from "../core/format-duration.ts";
import { createScrubber } from "../logging/redact.ts";
import type { FormatMessage } from "./batch.ts";
import { formatApprise } from "./formats/apprise.ts";
import { formatDiscord } from "./formats/discord.ts";
import { formatNtfy } from "./formats/ntfy.ts";
import { formatWebhook } from "./formats/webhook.ts";
import { createNotifier, type Notifier } from "./notifier.ts";
import { parseNotifierUrl } from "./notifier-url.ts";
import { combineNotifiers, type Notifiers } from "./notifiers.ts";
import { sendMessage } from "./send-message.ts";
import type { FailedFolder } from "../queue/failed-watch.ts";
import { backoffDelay } from "../core/backoff.ts";
import type { TargetChange } from "../queue/dispatch/target-delivery.ts";

/**
 * `NOTIFY` → the notifiers, and the events of the parts onto them: the queue's failed folders (`failed`), the
 * dispatcher's targets going down and coming back (`target_down`, `target_up`), what a backfill read queued
 * (`backfill_found`), the landed check's files no server showed (`not_visible`, through `notifiers.emit`) and the *arr
 * connection watch (`arr_disconnected`).
 */
export interface NotificationsInput {
  readonly config: Pick<Config, "NOTIFY">;
  readonly clock: Clock;
  readonly log: Logger;
  /** This process's instance id (the webhook document's `instance`). */
  readonly instance: string;
  /** One POST may take this long (default 10 s). */
  readonly timeoutMs?: number;
  /** The wait after the n-th failure in a row (default 30 s doubling to 15 min, with jitter). */
  readonly retryDelayMs?: (failures: number) => number;
}

export const NOTIFY_TIMEOUT_MS = 10_000;

/** A notifier that cannot deliver is tried again after 30 s, then 1, 2, 4 … minutes, at most every 15 minutes. */
export const notifyRetryDelayMs = (failures: number): number => backoffDelay(failures, { minMs: 30_000, maxMs: 15 * 60_000 });

const FORMATS: Readonly<Record<NotifierConfig["TYPE"], FormatMessage>> = {
  discord: formatDiscord,
  ntfy: formatNtfy,
  apprise: formatApprise,
  webhook: formatWebhook,
};

/**
 * The service's notifications: the notifiers, and what the queue, the dispatcher and the backfill tell them. Each
 * hook returns at once (an event is only kept in memory).
 */
export interface Notifications {
  readonly notifiers: Notifiers;
  /** For `queue.onFailed`. */
  foldersFailed(folders: readonly FailedFolder[]): void;
  /** For the dispatcher's `onTargetChange`. */
  targetChanged(change: TargetChange): void;
  /** An *arr app stopped sending to autoscan (src/arr/connection-watch.ts). */
  arrDisconnected(app: string, detail: string): void;
  /** It sends again: its `arr_disconnected` not sent yet is withdrawn (a warning that no longer holds). */
  arrReconnected(app: string): void;
  /** The backfill's sink, telling `backfill_found` for what it queued. */
  backfillSink(sink: ScanSink): ScanSink;
  /** `/health`'s `notifiers`, while one cannot deliver. */
  health(): ReturnType<typeof notifyHealth>;
  stop(): void;
}

export function notifyFromConfig(input: NotificationsInput): Notifications {
  const notifiers = createNotifiersFromConfig(input);
  const { clock } = input;
  return {
    notifiers,
    foldersFailed: (folders) => failedFolderEvents(folders, clock.now()).forEach(notifiers.emit),
    targetChanged: (change) => notifiers.emit(targetChangeEvent(change, clock.now())),
    arrDisconnected: (app, detail) => notifiers.emit({ event: "arr_disconnected", at: clock.now(), app, reason: detail }),
    arrReconnected: (app) => notifiers.withdraw((event) => event.event === "arr_disconnected" && event.app === app),
    backfillSink: (sink) => reportBackfillFinds(sink, notifiers.emit, clock),
    health: () => notifyHealth(notifiers),
    stop: () => notifiers.stop(),
  };
}

export function createNotifiersFromConfig(input: NotificationsInput): Notifiers {
  const log = input.log.child({ component: "NOTIFY" });
  return combineNotifiers(Object.entries(input.config.NOTIFY).map(([name, entry]) => notifierFromConfig(name, entry, input, log)));
}

function notifierFromConfig(name: string, entry: NotifierConfig, input: NotificationsInput, log: Logger): Notifier {
  const url = parseNotifierUrl(entry.URL);
  // The receiver's answer is quoted in errors (doctor, /health, `notify test`), which the log's redaction never sees.
  const scrubber = createScrubber(url.answerSecrets);
  const target = {
    url: url.sendUrl,
    ...(url.authorization ? { authorization: url.authorization } : {}),
    shown: url.shown,
    timeoutMs: input.timeoutMs ?? NOTIFY_TIMEOUT_MS,
    scrub: (text: string) => scrubber.scrub(text),
  };
  const format = FORMATS[entry.TYPE];
  return createNotifier({
    name,
    type: entry.TYPE,
    shown: url.shown,
    events: new Set(entry.EVENTS),
    batchMs: entry.BATCH_SECONDS * 1000,
    send: (batch, signal) => sendMessage(target, format(batch), signal),
    instance: input.instance,
    retryDelayMs: input.retryDelayMs ?? notifyRetryDelayMs,
    clock: input.clock,
    log,
  });
}

/** `/health`'s word on the notifiers, only while one cannot deliver (a detail: scans are not affected). */
export function notifyHealth(notifiers: Notifiers): {
  notifiers?: { failing: { name: string; type: string; since: string; attempts: number; problem: string; waiting: number }[] };
} {
  const failing = notifiers.states().flatMap((state) =>
    state.failing
      ? [{ name: state.name, type: state.type, since: new Date(state.failing.since).toISOString(), attempts: state.failing.attempts, problem: state.failing.problem, waiting: state.waiting }]
      : [],
  );
  return failing.length === 0 ? {} : { notifiers: { failing } };
}

/** The queue's failed folders as `failed` events. */
export function failedFolderEvents(folders: readonly FailedFolder[], at: number): NotifyEvent[] {
  return folders.map((folder) => ({
    event: "failed",
    at,
    folder: folder.folder,
    ...(folder.targets.length > 0 ? { target: folder.targets.join(", ") } : {}),
    reason: folder.reason,
    id: folder.id,
  }));
}

/** A target going down or coming back as `target_down` / `target_up`. */
export function targetChangeEvent(change: TargetChange, at: number): NotifyEvent {
  if (!change.available) return { event: "target_down", at, target: change.target, ...(change.reason ? { reason: change.reason } : {}) };
  const downFor = change.downSince === undefined ? undefined : formatDuration(at - change.downSince);
  return { event: "target_up", at, target: change.target, ...(downFor ? { reason: `down for ${downFor}` } : {}) };
}

/**
 * The backfill's sink, telling `backfill_found` for each folder it queued: everything the backfill hands on is what no
 * webhook brought (it leaves out what the queue already covers). One no server can scan is told `failed` too, once
 * judged (`intake/submit.ts`).
 */
export function reportBackfillFinds(sink: ScanSink, emit: NotifySink, clock: Pick<Clock, "now">): ScanSink {
  return async (requests, options) => {
    const result = await sink(requests, options);
    const at = clock.now();
    const told = new Set<string>();
    result.items.forEach((item, index) => {
      const request = requests[index];
      if (!request || told.has(item.folder)) return;
      told.add(item.folder);
      emit({ event: "backfill_found", at, folder: item.folder, app: request.source, ...(item.id === undefined ? {} : { id: item.id }) });
    });
    return result;
  };
}
