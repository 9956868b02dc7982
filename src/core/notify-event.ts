/**
 * The glossary of notifications (`NOTIFY`): what autoscan tells people about, and what each event carries. Whoever sees
 * something happen (the queue, the dispatcher, the backfill) hands a `NotifyEvent` to a `NotifySink` and goes on at once:
 * the sink only keeps it in memory; batching and sending happen elsewhere, on timers (src/notify), so no scan ever
 * waits for a notification.
 */
export const NOTIFY_EVENTS = ["failed", "not_visible", "target_down", "target_up", "arr_disconnected", "backfill_found"] as const;

export type NotifyEventName = (typeof NOTIFY_EVENTS)[number];

/** A notifier without `EVENTS` gets all of them but `backfill_found` (routine catching up, not a problem). */
export const DEFAULT_NOTIFY_EVENTS: readonly NotifyEventName[] = NOTIFY_EVENTS.filter((event) => event !== "backfill_found");

export interface NotifyEvent {
  readonly event: NotifyEventName;
  /** When it happened, ms since the epoch. */
  readonly at: number;
  /** The folder, in the primary Plex's path form (`failed`, `not_visible`, `backfill_found`). */
  readonly folder?: string;
  /** The server it is about (`target_down`, `target_up`, `not_visible`; `failed`: the servers that gave it up). */
  readonly target?: string;
  /** The *arr app it is about (`arr_disconnected`, `backfill_found`). */
  readonly app?: string;
  /** Why, in words (`failed`: the folder's last error as History shows it). */
  readonly reason?: string;
  /** The queue item (History's id, the `[<id>]` of its log lines). */
  readonly id?: number;
}

/** Takes an event and returns at once; never throws, never waits. */
export type NotifySink = (event: NotifyEvent) => void;
