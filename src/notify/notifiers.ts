import type { NotifyEvent, NotifySink } from "../core/notify-event.ts";
import type { Notifier, NotifierState } from "./notifier.ts";

/**
 * Every notifier of `NOTIFY` behind one `NotifySink`: an event goes to each notifier that listens for it. With none
 * configured, `emit` does nothing.
 */
export interface Notifiers {
  readonly emit: NotifySink;
  states(): NotifierState[];
  find(name: string): Notifier | undefined;
  /** Takes back, from every notifier, the events not sent yet that `match` picks (notifier.ts). */
  withdraw(match: (event: NotifyEvent) => boolean): void;
  stop(): void;
}

export function combineNotifiers(list: readonly Notifier[]): Notifiers {
  return {
    emit: (event) => {
      for (const notifier of list) notifier.emit(event);
    },
    states: () => list.map((notifier) => notifier.state()),
    find: (name) => list.find((notifier) => notifier.name === name),
    withdraw: (match) => {
      for (const notifier of list) notifier.withdraw(match);
    },
    stop: () => {
      for (const notifier of list) notifier.stop();
    },
  };
}
