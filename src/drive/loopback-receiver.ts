import { createServer, type Server } from "node:http";
import { escapeHtml } from "../core/escape-html.ts";

/**
 * The loopback half of Google's installed-app flow (RFC 8252 §7.3): a tiny HTTP server on 127.0.0.1 that catches the
 * browser's redirect `/?state=…&code=…`. It only helps when the browser can reach this port (same machine,
 * `ssh -L`, host networking); otherwise the user pastes the URL the browser ended on.
 */
export type RedirectResult =
  | { readonly code: string }
  | { readonly error: string; readonly description?: string };

export interface LoopbackReceiver {
  readonly port: number;
  /** Resolves with the first redirect that carries our `state`. */
  readonly received: Promise<RedirectResult>;
  close(): Promise<void>;
}

const PAGE = (text: string): string =>
  `<!doctype html><meta charset="utf-8"><title>autoscan</title><p style="font:16px sans-serif;margin:3em">${text}</p>`;

export async function startLoopbackReceiver(options: { readonly port: number; readonly state: string }): Promise<LoopbackReceiver> {
  let deliver: (result: RedirectResult) => void = () => undefined;
  const received = new Promise<RedirectResult>((resolve) => (deliver = resolve));
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const params = url.searchParams;
    if (url.pathname !== "/" || (!params.has("code") && !params.has("error"))) {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found");
      return;
    }
    if (params.get("state") !== options.state) {
      res.writeHead(400, { "content-type": "text/html" }).end(PAGE("This answer belongs to another authorization attempt. Use the link autoscan printed last."));
      return;
    }
    const error = params.get("error");
    const code = params.get("code");
    if (error || !code) {
      res.writeHead(200, { "content-type": "text/html" }).end(PAGE(`Google answered: ${escapeHtml(error ?? "no code")}. Go back to the terminal.`));
      deliver({ error: error ?? "no_code", description: params.get("error_description") ?? undefined });
      return;
    }
    res.writeHead(200, { "content-type": "text/html" }).end(PAGE("autoscan received the authorization. You can close this tab and go back to the terminal."));
    deliver({ code });
  });
  const port = await listen(server, options.port);
  return {
    port,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Listens on the wanted port, or on any free port when it is taken (the printed link carries the port). */
async function listen(server: Server, port: number): Promise<number> {
  const attempt = (wanted: number): Promise<number> =>
    new Promise((resolve, reject) => {
      const onError = (error: Error): void => reject(error);
      server.once("error", onError);
      server.listen(wanted, "127.0.0.1", () => {
        server.off("error", onError);
        const address = server.address();
        resolve(typeof address === "object" && address ? address.port : wanted);
      });
    });
  try {
    return await attempt(port);
  } catch (error) {
    if (port === 0 || (error as NodeJS.ErrnoException).code !== "EADDRINUSE") throw error;
    return attempt(0);
  }
}
