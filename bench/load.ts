/**
 * The load generator the webhook benches share: minimal keep-alive HTTP/1.1 connections on raw sockets (Node's own
 * client costs more CPU than the server it measures), a loop per connection for a fixed time or count, and Sonarr
 * payloads whose folders both merge and spread as in a real library.
 */
import { connect, type Socket } from "node:net";

export interface RunResult {
  readonly latencies: Float64Array;
  readonly count: number;
  readonly errors: number;
  readonly elapsedS: number;
}

/** One loop per connection, each sending one request after the other, for `seconds`. */
export async function runFor(
  seconds: number,
  connections: readonly Connection[],
  next: () => Buffer,
  limit = Number.POSITIVE_INFINITY,
): Promise<RunResult> {
  const latencies: number[] = [];
  let errors = 0;
  const started = performance.now();
  const until = started + seconds * 1000;
  await Promise.all(
    connections.map(async (connection) => {
      while (performance.now() < until && latencies.length < limit) {
        const t = performance.now();
        const status = await connection.send(next()).catch(() => 0);
        latencies.push(performance.now() - t);
        if (status !== 200) errors++;
      }
    }),
  );
  const elapsedS = (performance.now() - started) / 1000;
  return { latencies: Float64Array.from(latencies).sort(), count: latencies.length, errors, elapsedS };
}

/** A Sonarr v4 import: 400 shows, so folders both merge and spread as in a real library. */
export function payload(n: number, shows = 400): string {
  const show = `Show ${n % shows}`;
  return JSON.stringify({
    eventType: "Download",
    instanceName: "Sonarr",
    series: { id: n % shows, title: show, path: `/tv/${show}`, tvdbId: 100_000 + (n % shows), type: "standard" },
    episodes: [{ id: n, episodeNumber: (n % 24) + 1, seasonNumber: 1 + (n % 5), title: `Episode ${n}` }],
    episodeFile: {
      id: n,
      relativePath: `Season ${String(1 + (n % 5)).padStart(2, "0")}/${show} - S01E${n}.mkv`,
      quality: "WEBDL-1080p",
      size: 1_500_000_000,
    },
    isUpgrade: false,
    downloadClient: "SABnzbd",
    downloadId: `SABnzbd_nzo_${n}`,
  });
}

export function requestBytes(body: string, pass: string): Buffer {
  const head = `POST /${pass} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nUser-Agent: Sonarr/4.0.9.2244 (bench)\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`;
  return Buffer.from(head + body);
}

export interface Connection {
  send(request: Buffer): Promise<number>;
  close(): void;
}

/** A keep-alive HTTP/1.1 connection that sends one request at a time and reads one Content-Length answer. */
export function openConnection(port: number): Promise<Connection> {
  return new Promise((resolve, reject) => {
    const socket: Socket = connect(port, "127.0.0.1");
    socket.setNoDelay(true);
    let buffer: Buffer = Buffer.alloc(0);
    let waiting: { resolve: (status: number) => void; reject: (error: Error) => void } | undefined;
    socket.on("data", (chunk: Buffer) => {
      buffer = buffer.length === 0 ? chunk : Buffer.concat([buffer, chunk]);
      const end = buffer.indexOf("\r\n\r\n");
      if (end < 0 || !waiting) return;
      const head = buffer.subarray(0, end).toString("latin1");
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
      if (buffer.length < end + 4 + length) return;
      buffer = buffer.subarray(end + 4 + length);
      const done = waiting;
      waiting = undefined;
      done.resolve(Number(head.slice(9, 12)));
    });
    socket.on("error", (error) => waiting?.reject(error));
    socket.once("connect", () =>
      resolve({
        send: (request) =>
          new Promise((ok, fail) => {
            waiting = { resolve: ok, reject: fail };
            socket.write(request);
          }),
        close: () => socket.destroy(),
      }),
    );
    socket.once("error", reject);
  });
}


/** Latency percentile of a sorted run, in ms with two decimals. */
export function percentile(result: RunResult, p: number): string {
  return (result.latencies[Math.min(result.count - 1, Math.floor((p / 100) * result.count))] ?? NaN).toFixed(2);
}
