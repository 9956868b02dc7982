import type { Clock } from "../core/clock.ts";
import { describeError } from "../core/errors.ts";
import type { Logger } from "../core/logger.ts";
import type { NotifyEvent, NotifyEventName } from "../core/notify-event.ts";
import type { Batch } from "./batch.ts";
import type { Delivery } from "./send-message.ts";

/**
 * One notifier's queue, in memory. `emit` only appends (never waits, never throws), so nothing that emits is ever held
 * up by a notification. The rules:
 * - **Batching**: the first event of a batch opens a window of `batchMs`; when it ends, everything gathered goes as one
 *   message (0: at once, and what arrives while a message is on its way goes in the next one). At most one message
 *   starts per window: the next one waits until a window after the last one started.
 * - **Failure**: a message that could not be delivered (`retry`) goes back to the front of the queue and is tried again
 *   after `retryDelayMs(failures)` (30 s doubling to 15 min in the service), or the receiver's `retry_after` if longer;
 *   one the receiver refused (`refused`: a deleted webhook, a wrong password) is dropped and said as an error, and the
 *   next one waits the same backoff. The first failure of an episode is a WARNING, the recovery one INFO line.
 * - **Bounded**: at most `maxPending` events wait; beyond that the oldest go, counted, and the next message says how
 *   many were left out. A restart drops what was not sent (said at stop).
 */
export interface NotifierOptions {
  readonly name: string;
  /** `discord`, `ntfy`, `apprise`, `webhook`: for logs and `/health`. */
  readonly type: string;
  /** What may be said of its address (`https://discord.com`). */
  readonly shown: string;
  readonly events: ReadonlySet<NotifyEventName>;
  /** `BATCH_SECONDS` in ms. */
  readonly batchMs: number;
  /** Formats and sends one message (the wiring binds the TYPE's formatter and the address). */
  readonly send: (batch: Batch, signal: AbortSignal) => Promise<Delivery>;
  readonly instance: string;
  readonly retryDelayMs: (failures: number) => number;
  readonly clock: Clock;
  /** The NOTIFY logger. */
  readonly log: Logger;
  /** Events kept while the notifier cannot deliver (default 500). */
  readonly maxPending?: number;
}

export interface NotifierState {
  readonly name: string;
  readonly type: string;
  readonly shown: string;
  /** Events waiting for the next message. */
  readonly waiting: number;
  /** Events left out since the start because the queue was full. */
  readonly dropped: number;
  /** The last message delivered (ms). */
  readonly lastSentAt?: number;
  /** While the last message could not be delivered: since when, how many attempts in a row, why, and the next try. */
  readonly failing?: { readonly since: number; readonly attempts: number; readonly problem: string; readonly nextAttemptAt?: number };
}

export interface Notifier {
  readonly name: string;
  emit(event: NotifyEvent): void;
  state(): NotifierState;
  /**
   * Takes back the events not sent yet that `match` picks (an `arr_disconnected` whose app sends again before its batch
   * went); a message already on its way is not called back. How many were taken back.
   */
  withdraw(match: (event: NotifyEvent) => boolean): number;
  /** `autoscan notify test`: one test message now, outside the batches. */
  sendTest(): Promise<Delivery>;
  /** Stops the timers and any message on its way; what was not sent is dropped (and said). */
  stop(): void;
}

export const DEFAULT_MAX_PENDING = 500;

export function createNotifier(options: NotifierOptions): Notifier {
  const { name, clock, log } = options;
  const maxPending = Math.max(1, options.maxPending ?? DEFAULT_MAX_PENDING);
  const stopping = new AbortController();
  let pending: NotifyEvent[] = [];
  /** Left out since the last message (said in the next one). */
  let droppedSinceSent = 0;
  let droppedTotal = 0;
  /** When the current batch's first event arrived. */
  let windowStart: number | undefined;
  /** No message starts before this: a window after the last one started, or the backoff after a failure. */
  let notBefore = 0;
  let timer: AbortController | undefined;
  let sending = false;
  /** Events of the message on its way. */
  let inFlight = 0;
  let failures = 0;
  let lastSentAt: number | undefined;
  let failing: { since: number; attempts: number; problem: string; nextAttemptAt?: number } | undefined;
  const label = `'${name}' (${options.type} at ${options.shown})`;

  function keepAtMost(): void {
    const over = pending.length - maxPending;
    if (over <= 0) return;
    pending = pending.slice(over);
    droppedSinceSent += over;
    droppedTotal += over;
  }

  function schedule(): void {
    if (stopping.signal.aborted || sending || timer || pending.length === 0) return;
    const now = clock.now();
    windowStart ??= now;
    const dueAt = Math.max(windowStart + options.batchMs, notBefore);
    const wake = new AbortController();
    timer = wake;
    void clock.sleep(Math.max(0, dueAt - now), AbortSignal.any([wake.signal, stopping.signal])).then(() => {
      if (timer === wake) timer = undefined;
      if (wake.signal.aborted || stopping.signal.aborted) return;
      void flush();
    });
  }

  async function flush(): Promise<void> {
    if (sending || pending.length === 0) return;
    const events = pending;
    const dropped = droppedSinceSent;
    const openedAt = windowStart;
    pending = [];
    droppedSinceSent = 0;
    windowStart = undefined;
    sending = true;
    inFlight = events.length;
    const startedAt = clock.now();
    notBefore = startedAt + options.batchMs;
    const batch: Batch = { notifier: name, events, dropped, instance: options.instance, at: startedAt };
    const delivery = await options.send(batch, stopping.signal).catch((error: unknown): Delivery => ({ kind: "retry", problem: describeError(error) }));
    sending = false;
    inFlight = 0;
    if (stopping.signal.aborted) return;
    const now = clock.now();
    if (delivery.kind === "sent") {
      if (failing) log.info({ notifier: name, attempts: failing.attempts }, `Notifier ${label} delivers again (after ${String(failing.attempts)} failed attempt(s)).`);
      log.debug({ notifier: name, events: events.length, status: delivery.status }, `Sent ${String(events.length)} event(s) to notifier '${name}'.`);
      failures = 0;
      failing = undefined;
      lastSentAt = now;
    } else {
      failures += 1;
      const wait = Math.max(options.retryDelayMs(failures), delivery.kind === "retry" ? (delivery.waitAtLeastMs ?? 0) : 0);
      notBefore = Math.max(notBefore, now + wait);
      const first = failing === undefined;
      failing = { since: failing?.since ?? startedAt, attempts: failures, problem: delivery.problem, nextAttemptAt: notBefore };
      const fields = { notifier: name, attempts: failures, events: events.length };
      if (delivery.kind === "retry") {
        // Back to the front: the next message holds them, with what arrived meanwhile.
        pending = [...events, ...pending];
        droppedSinceSent += dropped;
        windowStart = openedAt ?? startedAt;
        keepAtMost();
        const line = `Notifier ${label} could not deliver: ${delivery.problem}. ${String(pending.length)} event(s) wait; trying again in ${String(Math.round(wait / 1000))} s.`;
        if (first) log.warn(fields, `${line} Scans go on meanwhile.`);
        else log.debug(fields, line);
      } else {
        log.error(fields, `Notifier ${label} refused a message of ${String(events.length)} event(s), which is dropped: ${delivery.problem}. Check NOTIFY.${name}.URL ('autoscan notify test --name ${name}').`);
      }
    }
    schedule();
  }

  return {
    name,
    emit(event) {
      if (stopping.signal.aborted || !options.events.has(event.event)) return;
      // The window opens with its first event, also while a message is on its way.
      windowStart ??= clock.now();
      pending.push(event);
      keepAtMost();
      schedule();
    },
    withdraw(match) {
      const kept = pending.filter((event) => !match(event));
      const taken = pending.length - kept.length;
      if (taken === 0) return 0;
      pending = kept;
      if (pending.length === 0) {
        // Nothing left to send: the window closes and its timer goes (the next event opens a new one).
        timer?.abort();
        timer = undefined;
        windowStart = undefined;
      }
      log.debug({ notifier: name, events: taken }, `${String(taken)} notification event(s) for '${name}' withdrawn before they were sent.`);
      return taken;
    },
    state: () => ({
      name,
      type: options.type,
      shown: options.shown,
      waiting: pending.length,
      dropped: droppedTotal,
      ...(lastSentAt === undefined ? {} : { lastSentAt }),
      ...(failing ? { failing: { ...failing } } : {}),
    }),
    sendTest: () => options.send({ notifier: name, events: [], dropped: 0, instance: options.instance, at: clock.now(), test: true }, stopping.signal),
    stop() {
      if (stopping.signal.aborted) return;
      stopping.abort();
      timer = undefined;
      const unsent = pending.length + inFlight;
      if (unsent > 0) log.info({ notifier: name, events: unsent }, `${String(unsent)} notification event(s) for '${name}' were not sent: autoscan is stopping.`);
      pending = [];
    },
  };
}
