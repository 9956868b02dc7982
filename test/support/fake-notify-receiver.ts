import { startFakeHttpServer, type FakeHttpServer, type HttpReply, type RecordedHttpRequest } from "./fake-media-server.ts";

/**
 * A receiver of notifications on 127.0.0.1 that answers as the real ones do where a sender can go wrong:
 * - Discord's Execute Webhook: `POST /api/webhooks/{id}/{token}` → 204 No Content; a rate limit is 429 with
 *   `{"message", "retry_after": <seconds>, "global"}`; an unknown webhook 404 `{"message": "Unknown Webhook", "code": 10015}`;
 * - ntfy's publish: `POST /<topic>` → 200 with the message as JSON (`{id, time, event: "message", topic, title, message}`);
 *   here under `/ntfy/<topic>`, as an ntfy behind a reverse proxy's sub-path, to tell it from a generic webhook;
 * - apprise-api's notify: `POST /notify/<KEY>` → 200; 424 when a service behind it failed;
 * - anything else (a generic JSON webhook) → 200.
 * Every request is recorded with its body (`messages`). Switches: `answerWith(status)` answers every request so, with a
 * body that quotes the request's path (as an error page may: a sender must not repeat it); `setDelay(ms)` holds every
 * answer (a hung receiver); `failNext` as the other fakes.
 */
export interface ReceivedMessage extends RecordedHttpRequest {
  /** The body parsed as JSON, when it is JSON. */
  readonly json?: unknown;
}

export interface FakeNotifyReceiver {
  readonly url: string;
  /** Every request, answered or not yet, in arrival order. */
  readonly messages: readonly ReceivedMessage[];
  /** Answer every request with this status (and a body quoting the path), or as the real service (`undefined`). */
  answerWith(status: number | undefined, body?: unknown): void;
  setDelay(ms: number): void;
  failNext(match: RegExp, status: number, times: number): void;
  close(): Promise<void>;
}

export async function startFakeNotifyReceiver(): Promise<FakeNotifyReceiver> {
  let forced: { status: number; body?: unknown } | undefined;
  const running: FakeHttpServer = await startFakeHttpServer((req) => {
    if (forced) return forced.body === undefined ? { status: forced.status, text: `cannot deliver to ${req.path}` } : { status: forced.status, json: forced.body };
    return realAnswer(req);
  });
  return {
    url: running.url,
    get messages() {
      return running.requests.map((req) => ({ ...req, ...parsed(req.body) }));
    },
    answerWith: (status, body) => void (forced = status === undefined ? undefined : { status, body }),
    setDelay: (ms) => running.setDelay(ms),
    failNext: (match, status, times) => running.failNext(match, status, times),
    close: () => running.close(),
  };
}

function realAnswer(req: RecordedHttpRequest): HttpReply {
  if (req.method !== "POST") return { status: 405, text: "method not allowed" };
  if (/^\/api\/webhooks\/[^/]+\/[^/]+$/.test(req.path)) return { status: 204 };
  if (/^\/notify(\/[A-Za-z0-9_-]{1,64})?\/?$/.test(req.path)) return { status: 200, text: "Notification(s) sent." };
  if (/^\/ntfy\/[^/]+$/.test(req.path)) {
    const topic = req.path.split("/").at(-1) ?? "";
    const title = req.headers.title;
    return { status: 200, json: { id: "abc123", time: 1_700_000_000, event: "message", topic, title, message: req.body } };
  }
  return { status: 200, json: { ok: true } };
}

function parsed(body: string): { json?: unknown } {
  try {
    return { json: JSON.parse(body) as unknown };
  } catch {
    return {};
  }
}
