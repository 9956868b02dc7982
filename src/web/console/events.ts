import type { IncomingMessage } from "node:http";
import type { Context } from "hono";
import { streamSSE } from "hono/streaming";
import { text, type Handler } from "../responses.ts";
import type { ConsoleDeps } from "./console-deps.ts";

/**
 * `GET /<SERVER_PASS>/events`: a Server-Sent Events stream that says `change` after the queue stored something (a
 * request, a check, a scan starting or ending, an action), at most one event per `THROTTLE_MS`. It carries no data:
 * the page fetches itself again. A stream subscribes to the queue only while it is open, so the console costs
 * nothing while no page is open; streams end when the browser leaves the page or the service stops.
 */
const THROTTLE_MS = 250;
const HEARTBEAT_MS = 20_000;
/** Browsers hold six connections per host over HTTP/1.1; a few tabs on a few devices stay far below this. */
const MAX_STREAMS = 64;

export function createEventsHandler(deps: ConsoleDeps): Handler {
  let open = 0;
  return (c: Context) => {
    const feed = deps.sources.changes;
    if (!feed) return text(c, "Live updates are not available here", 404);
    if (open >= MAX_STREAMS) return text(c, "Too many live pages are open; close some and reload", 503);
    const closing = deps.sources.closing;
    if (closing?.aborted) return text(c, "autoscan is stopping", 503);
    open += 1;
    return streamSSE(c, async (stream) => {
      let timer: NodeJS.Timeout | undefined;
      let last = 0;
      const send = (): void => {
        timer = undefined;
        last = Date.now();
        stream.writeSSE({ event: "change", data: String(last) }).catch(() => undefined);
      };
      const unsubscribe = feed.subscribe(() => {
        if (timer) return;
        timer = setTimeout(send, Math.max(0, last + THROTTLE_MS - Date.now()));
      });
      const heartbeat = setInterval(() => void stream.write(": keep-alive\n\n").catch(() => undefined), HEARTBEAT_MS);
      let stop = (): void => undefined;
      try {
        // `retry`: how long the browser waits before it reconnects after a lost stream.
        await stream.writeSSE({ event: "hello", data: "", retry: 2000 });
        await new Promise<void>((resolve) => {
          stop = resolve;
          // The service may have begun to stop while the first event was written.
          if (closing?.aborted) return resolve();
          stream.onAbort(resolve);
          c.req.raw.signal.addEventListener("abort", () => resolve(), { once: true });
          closing?.addEventListener("abort", stop, { once: true });
          // The server keeps half-closed sockets open for writing (see server.ts), so a browser that leaves shows
          // only as the end of its side of the socket: for a stream nothing else is expected from it.
          const socket = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming?.socket;
          socket?.once("end", () => resolve());
          socket?.once("close", () => resolve());
        });
      } finally {
        // The stop signal lives as long as the process: each stream takes its listener with it.
        closing?.removeEventListener("abort", stop);
        unsubscribe();
        clearInterval(heartbeat);
        clearTimeout(timer);
        open -= 1;
      }
    });
  };
}
