import type { Config } from "../../config/schema.ts";
import type { notifyHealth } from "../../notify/from-config.ts";
import { shownNotifierUrl } from "../../notify/notifier-url.ts";
import { ok, warn, type CheckResult } from "./check.ts";
import { readServerHealth } from "./running-server.ts";

/**
 * The notifiers (`NOTIFY`), each: what it is (type, the URL's scheme and host only: its path and password are secrets),
 * which events it gets, and — read from the running server's `/health` — whether the server can deliver to it. Doctor
 * runs as a process of its own and sends nothing: `autoscan notify test` does that on purpose.
 */
export async function notifyChecks(config: Config): Promise<CheckResult[]> {
  const health = await readServerHealth(config).catch(() => undefined);
  // undefined when no server answers here; its /health's shape is the service's own (notifyHealth).
  const failing = health && ((health.notifiers as ReturnType<typeof notifyHealth>["notifiers"])?.failing ?? []);
  return Object.entries(config.NOTIFY).map(([name, notifier]) => {
    const id = `notify.${name}`;
    const title = `Notifier ${name}`;
    const batch = notifier.BATCH_SECONDS === 0 ? "off" : `${String(notifier.BATCH_SECONDS)} s`;
    const what = `${notifier.TYPE} at ${shownNotifierUrl(notifier.URL)}; events ${notifier.EVENTS.join(", ")}; batch ${batch}.`;
    const failure = failing?.find((entry) => entry.name === name);
    if (failure) {
      return warn(
        id,
        title,
        `${what} The running server cannot deliver to it since ${failure.since} (${String(failure.attempts)} attempt(s)): ${failure.problem}. ${String(failure.waiting)} event(s) wait; scans are not affected.`,
        `Check NOTIFY.${name}.URL and that the receiver answers from autoscan's network; 'autoscan notify test --name ${name}' sends a test message.`,
      );
    }
    const state =
      failing === undefined
        ? "No server answers here, so its deliveries are not known; 'autoscan notify test' sends a test message."
        : "The running server's last message to it was delivered (or none was due).";
    return ok(id, title, `${what} ${state}`);
  });
}
