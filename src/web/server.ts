import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import { serve } from "@hono/node-server";
import type { Hono } from "hono";
import type { Logger } from "../core/logger.ts";
import { DEFAULT_REQUEST_TIMEOUT_MS } from "./options.ts";

/**
 * Listens with Node's HTTP server. `requestTimeoutMs` bounds how long a client may take to send its request
 * (a slow-loris body gets 408 and the socket is closed); the handler's own wait for the queue uses the same bound.
 */
export interface WebServerOptions {
  /** The app (or anything that answers a fetch: the service swaps its app on a config reload). */
  readonly app: Pick<Hono, "fetch">;
  readonly hostname: string;
  /** 0 picks a free port (tests). */
  readonly port: number;
  readonly requestTimeoutMs?: number;
  readonly log?: Logger;
}

export interface WebServer {
  /** `http://host:port`, with the port actually bound. */
  readonly url: string;
  readonly port: number;
  /** Stops accepting, lets requests in flight finish, then closes idle keep-alive sockets. */
  close(): Promise<void>;
}

export function startWebServer(options: WebServerOptions): Promise<WebServer> {
  const timeout = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  return new Promise((resolve, reject) => {
    const server = serve(
      {
        fetch: options.app.fetch,
        hostname: options.hostname,
        port: options.port,
        serverOptions: {
          requestTimeout: timeout,
          headersTimeout: Math.min(timeout, 60_000),
          keepAliveTimeout: 5_000,
          // Node checks the timeouts on this interval (default 30 s), so a short timeout needs a shorter check.
          connectionsCheckingInterval: Math.min(30_000, Math.max(250, Math.floor(timeout / 4))),
        },
      },
      (info: AddressInfo) => {
        server.off("error", reject);
        const host = info.family === "IPv6" ? `[${info.address}]` : info.address;
        resolve({ url: `http://${host}:${info.port}`, port: info.port, close: () => closeServer(server as Server) });
      },
    );
    server.once("error", reject);
    allowHalfClosedClients(server as Server);
    // Node's default answers, plus a debug line: adding a listener replaces the default handler.
    server.on("clientError", (error: NodeJS.ErrnoException, socket) => {
      options.log?.debug({ code: error.code }, "Malformed or timed-out HTTP request");
      if (!socket.writable) return socket.destroy();
      const status = CLIENT_ERROR_STATUS[error.code ?? ""] ?? "400 Bad Request";
      socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
    });
  });
}

/**
 * A client may send its request and then shut down its sending side (`printf … | nc -q0`, some scripts and
 * proxies): a TCP half-close, which does not mean it has lost interest in the answer (RFC 9112 says so). Node's HTTP
 * server takes that FIN as an abort by default (it destroys the request and ends the socket), so an answer that is
 * not ready at once (a webhook waits for the queue's fsync) was never sent. With `httpAllowHalfOpen` Node keeps the
 * socket open for writing, answers every request already read, then closes; an idle socket that gets a FIN is still
 * closed at once. The property is Node's own (lib/_http_server.js reads it when the socket ends; Node's tests set
 * it) and undocumented: `http.createServer` takes no option for it.
 */
function allowHalfClosedClients(server: Server): void {
  (server as Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
}

const CLIENT_ERROR_STATUS: Readonly<Record<string, string>> = {
  ERR_HTTP_REQUEST_TIMEOUT: "408 Request Timeout",
  HPE_HEADER_OVERFLOW: "431 Request Header Fields Too Large",
};

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    // A client that keeps its connection busy (an *arr app or a proxy reusing it for request after request) would hold
    // a stop open: every answer from now on says `Connection: close`, so each such connection ends after its answer.
    server.prependListener("request", (_request, response) => response.setHeader("connection", "close"));
    server.close(() => resolve());
    server.closeIdleConnections();
  });
}
