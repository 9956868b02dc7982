/**
 * End-to-end webhook ingest over real HTTP: Sonarr `Download` payloads POSTed to `/<SERVER_PASS>` by 20 keep-alive
 * connections, into the real app, the real queue (sql.js, a real file, durable before every 200) and the classic
 * logger. The server runs in a child process so that the load generator does not share its event loop, and the load
 * generator is a minimal keep-alive HTTP/1.1 client on raw sockets (Node's own client costs more CPU than the server
 * it measures). For scale, the same generator is first run against a bare Node HTTP server that answers "OK": on a
 * busy machine both figures drop together.
 * Prints requests/s and latency percentiles (target: ≥ 3,000 req/s and p99 < 50 ms on a 2-core machine).
 *
 * Three runs, each 10 s after a 2 s warm-up: the yardstick, the web layer alone (an in-memory sink instead of the
 * queue), and end to end. The difference between the last two is the queue's share.
 *
 *   node bench/webhook.ts
 *   BENCH_SECONDS=30 BENCH_CONNECTIONS=50 node bench/webhook.ts
 *   BENCH_ONLY=end BENCH_NODE_OPTIONS= node bench/webhook.ts   # end to end only, without the image's Node options
 *   BENCH_METRICS=1 node bench/webhook.ts                    # with SERVER_METRICS on (requests and store writes counted)
 */
import { fork, type ChildProcess } from "node:child_process";
import { describeAllocator, shippedEnv, shippedNodeOptions } from "./shipped.ts";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { systemClock } from "../src/core/clock.ts";
import { createLogger } from "../src/logging/create-logger.ts";
import { createPathMapper } from "../src/paths/mapping.ts";
import { createMetrics } from "../src/ops/metrics/create-metrics.ts";
import { createScanQueue } from "../src/queue/open-scan-queue.ts";
import { createApp } from "../src/web/app.ts";
import { startWebServer } from "../src/web/server.ts";
import { queueAdminFromScanQueue, queueHealth } from "../src/web/from-config.ts";
import { openConnection, payload, percentile, requestBytes, runFor, type RunResult } from "./load.ts";

const PASS = "0123456789abcdef0123456789abcdef";
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 20);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const WARMUP_SECONDS = 2;
/** The server runs as shipped (the image's Node options and allocator setting, `shipped.ts`). */
const SHIPPED_NODE_OPTIONS = shippedNodeOptions;

if (process.argv[2] === "--serve") await serve(process.argv[3] ?? "");
else if (process.argv[2] === "--bare") serveBare();
else await main();

/** The yardstick: Node's HTTP server reading the body and answering "OK", nothing else. */
function serveBare(): void {
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "text/plain", "content-length": 2 });
      res.end("OK");
    });
  });
  server.listen(0, "127.0.0.1", () => {
    const address = server.address();
    process.send?.({ port: typeof address === "object" && address ? address.port : 0 });
  });
  let mark = process.cpuUsage();
  process.on("message", (message: { cmd?: string }) => {
    if (message.cmd === "mark") return void (mark = process.cpuUsage());
    process.send?.({ pending: 0, rss: process.memoryUsage().rss, cpuUs: cpuSince(mark) });
    process.exit(0);
  });
}

/** The child: queue file in `dir`, app, server on a free port; reports the port to the parent. */
async function serve(dir: string): Promise<void> {
  const { log } = createLogger({ level: (process.env.BENCH_LOG_LEVEL ?? "info") as "info", format: "classic", stream: { write: () => undefined } });
  const metrics = process.env.BENCH_METRICS === "1" ? createMetrics() : undefined;
  const queue = await createScanQueue({ file: join(dir, "queue.db"), clock: systemClock, log, scanDelayMs: 600_000, metrics });
  // "--memory": the HTTP side alone (parse, map, log, answer) with an in-memory sink, to show where the time goes.
  const memory = process.argv[4] === "--memory";
  const app = createApp({
    sink: memory ? async (requests) => ({ items: requests.map((r) => ({ folder: r.path, merged: false })) }) : queue.enqueue,
    mapper: createPathMapper({ mappings: { "/data/TV/": ["/tv/"] } }),
    queue: queueAdminFromScanQueue(queue),
    health: () => queueHealth(queue),
    log,
    serverPass: PASS,
    allowManualScan: false,
    ignoreList: [],
    ...(metrics ? { metrics } : {}),
  });
  const server = await startWebServer({ app, hostname: "127.0.0.1", port: 0 });
  process.send?.({ port: server.port });
  let mark = process.cpuUsage();
  process.on("message", async (message: { cmd?: string }) => {
    if (message.cmd === "mark") return void (mark = process.cpuUsage());
    if (message.cmd !== "stop") return;
    const cpuUs = cpuSince(mark);
    const pending = await queue.pendingCount();
    await server.close();
    await queue.close();
    process.send?.({ pending, rss: process.memoryUsage().rss, cpuUs });
    process.exit(0);
  });
}

function cpuSince(mark: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(mark);
  return used.user + used.system;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "autoscan-bench-webhook-"));
  // BENCH_ONLY=bare|web|end runs one of the three.
  const only = process.env.BENCH_ONLY;
  console.log(
    `Server as in the image: Node options ${SHIPPED_NODE_OPTIONS.join(" ") || "none"}, ` +
      `${describeAllocator()}`,
  );
  try {
    if (!only || only === "bare") {
      const bare = await measure(["--bare"]);
      report("bare Node HTTP server answering OK (the yardstick)", bare.result, bare.after);
    }
    if (!only || only === "web") {
      mkdirSync(join(dir, "memory"));
      const web = await measure(["--serve", join(dir, "memory"), "--memory"]);
      report("web layer alone: real app (parse, map, classic log line) → in-memory sink", web.result, web.after);
    }
    if (!only || only === "end") {
      const real = await measure(["--serve", dir]);
      report("end to end: Sonarr Download → real app → queue file, durable before 200", real.result, real.after);
      const rss = (real.after.rss / 1024 / 1024).toFixed(0);
      console.log(`  queue after: ${real.after.pending} folders pending; server RSS ${rss} MB`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

interface After {
  readonly pending: number;
  readonly rss: number;
  /** Server CPU (user + system) spent while measuring, in microseconds. */
  readonly cpuUs: number;
  /** The load generator's own CPU while measuring, in microseconds (it shares the machine with the server). */
  readonly clientCpuUs?: number;
  /** Share of the machine's CPU time stolen by the hypervisor while measuring. */
  readonly steal?: number | undefined;
}

async function measure(args: string[]): Promise<{ result: RunResult; after: After }> {
  const profile = process.env.BENCH_PROFILE ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : [];
  const execArgv = [...profile, ...SHIPPED_NODE_OPTIONS];
  const child = fork(import.meta.filename, args, {
    stdio: ["ignore", "inherit", "inherit", "ipc"],
    execArgv,
    env: { ...process.env, ...shippedEnv },
  });
  try {
    const { port } = await nextMessage<{ port: number }>(child);
    const connections = await Promise.all(Array.from({ length: CONNECTIONS }, () => openConnection(port)));
    let counter = 0;
    const next = (): Buffer => requestBytes(payload(counter++), PASS);
    await runFor(WARMUP_SECONDS, connections, next);
    child.send({ cmd: "mark" });
    const machine = readCpuTimes();
    const ownCpu = process.cpuUsage();
    const result = await runFor(SECONDS, connections, next);
    const clientCpuUs = cpuSince(ownCpu);
    const steal = stealShare(machine, readCpuTimes());
    connections.forEach((connection) => connection.close());
    child.send({ cmd: "stop" });
    const after = await nextMessage<After>(child);
    await new Promise((resolve) => child.once("exit", resolve));
    return { result, after: { ...after, clientCpuUs, steal } };
  } finally {
    child.kill();
  }
}

/** The machine's CPU time counters (Linux `/proc/stat`, in clock ticks); undefined elsewhere. */
function readCpuTimes(): number[] | undefined {
  try {
    const line = readFileSync("/proc/stat", "utf8").split("\n", 1)[0] ?? "";
    return line.trim().split(/\s+/).slice(1).map(Number);
  } catch {
    return undefined;
  }
}

/**
 * The share of CPU time the hypervisor gave to other guests while we measured ("steal", the 8th counter). On a
 * shared virtual machine it is the main reason one run differs from the next.
 */
function stealShare(before: number[] | undefined, after: number[] | undefined): number | undefined {
  if (!before || !after || before.length < 8) return undefined;
  const deltas = after.map((value, i) => value - (before[i] ?? 0));
  const total = deltas.slice(0, 8).reduce((sum, value) => sum + value, 0);
  return total > 0 ? (deltas[7] ?? 0) / total : undefined;
}

function nextMessage<T>(child: ChildProcess): Promise<T> {
  return new Promise((resolve, reject) => {
    child.once("message", (message) => resolve(message as T));
    child.once("exit", (code) => reject(new Error(`bench server exited with ${String(code)}`)));
  });
}

function report(title: string, result: RunResult, after: After): void {
  const pct = (p: number): string => percentile(result, p);
  console.log(`${title}, ${CONNECTIONS} connections, ${result.elapsedS.toFixed(1)} s:`);
  console.log(`  requests/s: ${(result.count / result.elapsedS).toFixed(0)}   requests: ${result.count}   non-200: ${result.errors}`);
  console.log(`  latency ms: p50 ${pct(50)}   p90 ${pct(90)}   p99 ${pct(99)}   max ${pct(100)}`);
  // CPU per request barely depends on how busy the machine is; 1 s of one core divided by it is the ceiling of one
  // server process when nothing else runs.
  const perRequest = after.cpuUs / Math.max(1, result.count);
  console.log(`  server CPU per request: ${perRequest.toFixed(0)} µs → one-core ceiling ≈ ${(1e6 / perRequest).toFixed(0)} req/s`);
  const client = (after.clientCpuUs ?? 0) / Math.max(1, result.count);
  const steal = after.steal === undefined ? "" : `; CPU stolen by the hypervisor meanwhile: ${(after.steal * 100).toFixed(1)}%`;
  console.log(`  load generator CPU per request: ${client.toFixed(0)} µs${steal}`);
}
