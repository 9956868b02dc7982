import type { Config } from "../../config/schema.ts";
import { httpCall } from "../../http/http-call.ts";
import type { NotifyProbe, ServerNotifierFailure } from "../../ops/doctor/notify.ts";
import { connectHost } from "../../ops/doctor/port.ts";
import { shownNotifierUrl } from "../../notify/notifier-url.ts";

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
      const host = connectHost(config.SERVER_IP);
      const url = `http://${host.includes(":") ? `[${host}]` : host}:${String(config.SERVER_PORT)}/health`;
      const answer = await httpCall({ method: "GET", url, timeoutMs: 3000, maxBytes: 1024 * 1024 }).catch(() => undefined);
      // 503 is an answer too (the store cannot write): its notifiers detail still holds.
      if (answer === undefined || (answer.status !== 200 && answer.status !== 503)) return undefined;
      try {
        const body = JSON.parse(answer.body) as { status?: unknown; notifiers?: { failing?: ServerNotifierFailure[] } };
        return typeof body.status === "string" ? (body.notifiers?.failing ?? []) : undefined;
      } catch {
        return undefined;
      }
    },
  };
}
