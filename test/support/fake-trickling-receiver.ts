import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A receiver of notifications that answers its status at once and then takes its time over the body, as a proxy or a
 * busy service in front of a webhook may: `big` sends the status and a body of `bytes` (more than a sender reads),
 * `endless` sends the status and a first chunk, then holds the body open until the receiver is closed.
 */
export interface FakeTricklingReceiver {
  readonly url: string;
  /** Requests received so far. */
  readonly received: number;
  close(): Promise<void>;
}

export type TrickleMode = { readonly kind: "big"; readonly status: number; readonly bytes: number } | { readonly kind: "endless"; readonly status: number };

export async function startFakeTricklingReceiver(mode: TrickleMode): Promise<FakeTricklingReceiver> {
  let received = 0;
  const open = new Set<ServerResponse>();
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      received += 1;
      res.writeHead(mode.status, { "content-type": "text/plain" });
      if (mode.kind === "big") return void res.end("x".repeat(mode.bytes));
      res.write("accepted; details follow ");
      open.add(res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${String(port)}`,
    get received() {
      return received;
    },
    close: async () => {
      for (const res of open) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
