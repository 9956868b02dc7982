import type { Config } from "../../config/schema.ts";
import type { NotifyProbe, ServerNotifierFailure } from "../../ops/doctor/notify.ts";
import { shownNotifierUrl } from "../../notify/notifier-url.ts";
import { readServerHealth } from "./server-health.ts";

/** `NOTIFY` → the doctor's notifier facts, and the running server's failing notifiers read from its `/health`. */
export function notifyProbe(config: Config): NotifyProbe {
  return {
    notifiers: Object.entries(config.NOTIFY).map(([name, notifier]) => ({
      name,
      type: notifier.TYPE,
      shown: shownNotifierUrl(notifier.URL),
      events: notifier.EVENTS,
      batchSeconds: notifier.BATCH_SECONDS,
    })),
    async failing() {
      const body = await readServerHealth(config);
      return body === undefined ? undefined : ((body.notifiers as { failing?: ServerNotifierFailure[] } | undefined)?.failing ?? []);
    },
  };
}
