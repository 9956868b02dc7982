import type { NotifyEvent } from "../core/notify-event.ts";

/**
 * What one message carries: the events one notifier gathered in one batch window (or `autoscan notify test`'s message).
 * Each TYPE has a formatter (`formats/*.ts`) that turns a batch into one POST; the sender adds the address and auth.
 */
export interface Batch {
  /** The notifier's name (`NOTIFY.<name>`). */
  readonly notifier: string;
  readonly events: readonly NotifyEvent[];
  /** Events left out because the notifier could not deliver and its queue was full (the oldest go first). */
  readonly dropped: number;
  /** This autoscan (`<host>-<pid>-<4 hex>`, as `/health` names it with PostgreSQL). */
  readonly instance: string;
  /** When the message is made, ms since the epoch. */
  readonly at: number;
  /** The test message of `autoscan notify test`: no events. */
  readonly test?: boolean;
}

export interface OutgoingMessage {
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

export type FormatMessage = (batch: Batch) => OutgoingMessage;
