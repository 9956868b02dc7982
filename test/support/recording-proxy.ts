import { createServer, request as httpRequest, Agent, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A small HTTP front for one caller of a shared fake (one autoscan instance in front of the one fake Plex, or of the one
 * fake Google): it forwards every request unchanged and records it with its arrival and answer times, so a test can
 * tell which instance asked what, and when. It can hold an answer back (a slow Plex for that instance's scans) and run
 * a hook the moment a request arrives (e.g. SIGKILL the caller while its scan is in flight).
 */
export interface ProxiedRequest {
  readonly method: string;
  readonly path: string;
  readonly query: URLSearchParams;
  /** `Date.now()` when the request reached the front (before it is forwarded). */
  readonly receivedAt: number;
  /** `Date.now()` when the answer was written back (undefined while it is held or forwarded). */
  answeredAt?: number;
}

export interface RecordingProxyOptions {
  /** How long to hold this request's answer after the fake answered (ms); default 0. */
  readonly holdMs?: (request: ProxiedRequest) => number;
  /** Runs synchronously when a request arrives, before it is forwarded. */
  readonly onRequest?: (request: ProxiedRequest) => void;
}

export interface RecordingProxy {
  readonly url: string;
  readonly requests: ProxiedRequest[];
  /** Requests matching `METHOD /path` that arrived and are not answered yet. */
  inFlight(match: RegExp): ProxiedRequest[];
  close(): Promise<void>;
}

export async function startRecordingProxy(target: string, options: RecordingProxyOptions = {}): Promise<RecordingProxy> {
  const upstream = new URL(target);
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const requests: ProxiedRequest[] = [];
  const server = createServer((incoming, res) => {
    const url = new URL(incoming.url ?? "/", "http://127.0.0.1");
    const recorded: ProxiedRequest = { method: incoming.method ?? "GET", path: url.pathname, query: url.searchParams, receivedAt: Date.now() };
    requests.push(recorded);
    options.onRequest?.(recorded);
    const chunks: Buffer[] = [];
    incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
    incoming.on("end", () => {
      const headers: IncomingHttpHeaders = { ...incoming.headers, host: upstream.host, connection: "keep-alive" };
      const out = httpRequest(
        { agent, host: upstream.hostname, port: upstream.port, method: recorded.method, path: incoming.url, headers },
        (answer) => {
          const body: Buffer[] = [];
          answer.on("data", (chunk: Buffer) => body.push(chunk));
          answer.on("end", () => {
            const reply = (): void => {
              recorded.answeredAt = Date.now();
              const head = { ...answer.headers };
              delete head["transfer-encoding"];
              delete head.connection;
              const data = Buffer.concat(body);
              head["content-length"] = String(data.length);
              if (res.destroyed) return;
              res.writeHead(answer.statusCode ?? 502, head).end(data);
            };
            const hold = options.holdMs?.(recorded) ?? 0;
            if (hold > 0) setTimeout(reply, hold).unref();
            else reply();
          });
        },
      );
      out.on("error", () => {
        recorded.answeredAt = Date.now();
        if (!res.destroyed) res.writeHead(502).end();
      });
      out.end(Buffer.concat(chunks));
    });
    // The caller may die mid-request (SIGKILL): its socket errors are expected.
    res.on("error", () => undefined);
    incoming.on("error", () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${String(port)}`,
    requests,
    inFlight: (match) => requests.filter((r) => r.answeredAt === undefined && match.test(`${r.method} ${r.path}`)),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
        agent.destroy();
      }),
  };
}
