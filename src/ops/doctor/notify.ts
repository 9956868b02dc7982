import { ok, warn, type CheckResult } from "./check.ts";
import type { CheckFamily } from "./run-checks.ts";

/**
 * The notifiers (`NOTIFY`), each: what it is (type, the URL's scheme and host only: its path and password are secrets),
 * which events it gets, and — read from the running server's `/health` — whether the server can deliver to it. Doctor
 * runs as a process of its own and sends nothing: `autoscan notify test` does that on purpose.
 */
export interface NotifierFacts {
  readonly name: string;
  readonly type: string;
  /** Scheme, host and port (`https://discord.com`). */
  readonly shown: string;
  readonly events: readonly string[];
  readonly batchSeconds: number;
}

export interface ServerNotifierFailure {
  readonly name: string;
  readonly since: string;
  readonly attempts: number;
  readonly problem: string;
  readonly waiting: number;
}

export interface NotifyProbe {
  readonly notifiers: readonly NotifierFacts[];
  /** The running server's notifiers that cannot deliver; undefined when no server answers here. */
  failing(): Promise<readonly ServerNotifierFailure[] | undefined>;
}

export function notifyFamily(probe: NotifyProbe): CheckFamily {
  return { name: "notify", run: async () => notifyChecks(probe) };
}

async function notifyChecks(probe: NotifyProbe): Promise<CheckResult[]> {
  const failing = await probe.failing().catch(() => undefined);
  return probe.notifiers.map((notifier) => {
    const id = `notify.${notifier.name}`;
    const title = `Notifier ${notifier.name}`;
    const what = `${notifier.type} at ${notifier.shown}; events ${notifier.events.join(", ")}; batch ${notifier.batchSeconds === 0 ? "off" : `${String(notifier.batchSeconds)} s`}.`;
    const failure = failing?.find((entry) => entry.name === notifier.name);
    if (failure) {
      return warn(
        id,
        title,
        `${what} The running server cannot deliver to it since ${failure.since} (${String(failure.attempts)} attempt(s)): ${failure.problem}. ${String(failure.waiting)} event(s) wait; scans are not affected.`,
        `Check NOTIFY.${notifier.name}.URL and that the receiver answers from autoscan's network; 'autoscan notify test --name ${notifier.name}' sends a test message.`,
      );
    }
    const state =
      failing === undefined
        ? "No server answers here, so its deliveries are not known; 'autoscan notify test' sends a test message."
        : "The running server's last message to it was delivered (or none was due).";
    return ok(id, title, `${what} ${state}`);
  });
}
