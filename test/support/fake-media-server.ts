import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * The HTTP plumbing shared by the fake Jellyfin and Emby servers: one listener on 127.0.0.1, every request recorded
 * (with its body), and the switches a test needs to play an outage:
 * - `setDown("refused")`: the listener is closed, so connections are refused, until `setDown(false)` listens again
 *   on the same port; `"reset"`: connections are accepted and dropped; a number: every request gets that status;
 * - `setDelay(ms)`: every answer waits that long first (real time);
 * - `failNext(match, status, times)`: the next `times` requests whose `METHOD /path` matches get `status`.
 */
export interface RecordedHttpRequest {
  readonly method: string;
  /** The path as it arrived (case kept). */
  readonly path: string;
  /** The query exactly as it arrived on the wire (still encoded). */
  readonly rawQuery: string;
  readonly query: URLSearchParams;
  readonly headers: IncomingMessage["headers"];
  readonly body: string;
}

export interface HttpReply {
  readonly status: number;
  readonly json?: unknown;
  readonly text?: string;
}

export interface FakeHttpServer {
  readonly url: string;
  readonly requests: RecordedHttpRequest[];
  setDown(mode: false | "refused" | "reset" | number): Promise<void>;
  setDelay(ms: number): void;
  failNext(match: RegExp, status: number, times: number): void;
  close(): Promise<void>;
}

export async function startFakeHttpServer(route: (req: RecordedHttpRequest) => HttpReply): Promise<FakeHttpServer> {
  const requests: RecordedHttpRequest[] = [];
  const failures: { match: RegExp; status: number; times: number }[] = [];
  let down: false | "refused" | "reset" | number = false;
  let delayMs = 0;

  const server = createServer((incoming, res) => {
    const chunks: Buffer[] = [];
    incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
    incoming.on("end", () => {
      const url = new URL(incoming.url ?? "/", "http://127.0.0.1");
      const req: RecordedHttpRequest = {
        method: incoming.method ?? "GET",
        path: url.pathname,
        rawQuery: (incoming.url ?? "").split("?")[1] ?? "",
        query: url.searchParams,
        headers: incoming.headers,
        body: Buffer.concat(chunks).toString("utf8"),
      };
      requests.push(req);
      const answer = (): void => {
        if (down === "reset") return void incoming.socket.destroy();
        if (typeof down === "number") return send(res, { status: down, text: `${down}` });
        const failure = failures.find((f) => f.times > 0 && f.match.test(`${req.method} ${req.path}`));
        if (failure) {
          failure.times -= 1;
          return send(res, { status: failure.status, text: `injected ${failure.status}` });
        }
        send(res, route(req));
      };
      if (delayMs > 0) setTimeout(answer, delayMs).unref();
      else answer();
    });
  });
  await listen(server, 0);
  const { port } = server.address() as AddressInfo;

  async function stopListening(): Promise<void> {
    if (!server.listening) return;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    await closed;
  }

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    async setDown(mode) {
      if (mode === "refused") await stopListening();
      else if (!server.listening) await listen(server, port);
      down = mode;
    },
    setDelay: (ms) => void (delayMs = ms),
    failNext: (match, status, times) => void failures.push({ match, status, times }),
    close: stopListening,
  };
}

function listen(server: Server, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
}

function send(res: ServerResponse, reply: HttpReply): void {
  if (reply.json !== undefined) {
    return void res.writeHead(reply.status, { "Content-Type": "application/json; charset=utf-8" }).end(JSON.stringify(reply.json));
  }
  if (reply.text !== undefined) return void res.writeHead(reply.status, { "Content-Type": "text/plain; charset=utf-8" }).end(reply.text);
  res.writeHead(reply.status).end();
}

/** `key="value", key2="value 2"` (the parameters of the MediaBrowser and Emby auth schemes), names lower-cased. */
export function parseAuthParams(text: string): Map<string, string> {
  const params = new Map<string, string>();
  for (const match of text.matchAll(/([A-Za-z]+)\s*=\s*(?:"([^"]*)"|([^,\s]*))/g)) {
    params.set((match[1] ?? "").toLowerCase(), decodeURIComponent(match[2] ?? match[3] ?? ""));
  }
  return params;
}
