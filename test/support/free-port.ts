import { createServer } from "node:net";

/**
 * A TCP port that was free a moment ago on 127.0.0.1. The server under test takes its port from config.json, so it
 * cannot listen on port 0 itself: we hand it a number, and it listens a second or two later (a child process starting).
 * The number is drawn below Linux's ephemeral range (32768–60999), where the kernel never puts what binds port 0 —
 * the fakes of other test files running meanwhile — so they cannot take it in that window; drawn at random, so two
 * test files rarely draw the same one, and checked to be free.
 */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if (await canListen(port)) return port;
  }
  throw new Error("no free port found between 20000 and 32000");
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

/** Holds a port busy (like another service would) until `close()` is called. */
export function occupyPort(): Promise<{ port: number; close(): Promise<void> }> {
  return new Promise((resolve, reject) => {
    const server = createServer((socket) => socket.destroy());
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      resolve({ port, close: () => new Promise<void>((done) => server.close(() => done())) });
    });
  });
}
