/**
 * The real service, as shipped: `autoscan server` from the build (`dist/`, built first), run with the image's Node
 * options, a real queue file, real files for the file checks, and a local fake Plex (test/support/fake-plex.ts) that
 * answers scans at once. Prints, for the queue store issue:
 *  1. RSS idle after start (floor ≤ 80 MB);
 *  2. webhooks/s and latency at 20 connections with dispatch idle (SERVER_SCAN_DELAY 600) — target ≥ 1,000/s, p99 < 50 ms;
 *  3. the same with SERVER_SCAN_DELAY 1, so folders are checked and scanned while requests arrive (within 1.5× of 2.);
 *  4. RSS through 100,000 accepted requests with the default history limits: the highest during the load and while the
 *     queue is dispatched (floor ≤ 140 MB), and a minute after (floor ≤ 110 MB);
 *  5. intake while 30,000 due folders are dispatched (a Plex outage ending).
 *
 * The fake Plex's library fills from the disk after each scan, so the landed check (SERVER_CONFIRM_LANDED) confirms each
 * scanned folder, as with a real Plex: "a minute later" in 4. includes those looks (≤ 300 per minute).
 *
 *   node bench/service.ts                 BENCH_SECONDS=20 node bench/service.ts
 *   BENCH_AFTER_MS=200000 node bench/service.ts     (4.'s last figure taken 200 s after the queue drained)
 *   BENCH_NO_LANDED=1 node bench/service.ts         (SERVER_CONFIRM_LANDED off, to compare)
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startFakePlex } from "../test/support/fake-plex.ts";
import { freePort } from "../test/support/free-port.ts";
import { describeAllocator, shippedEnv, shippedNodeOptions } from "./shipped.ts";
import { openConnection, payload, percentile, requestBytes, runFor, type Connection, type RunResult } from "./load.ts";

const PASS = "0123456789abcdef0123456789abcdef";
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 20);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const SHOWS = 400;
/** BENCH_ONLY=idle,busy,backlog runs only those servers (default all). */
const only = (process.env.BENCH_ONLY ?? "idle,busy,backlog").split(",");
const root = fileURLToPath(new URL("..", import.meta.url));

const built = spawnSync(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.build.json"], {
  cwd: root,
  stdio: "inherit",
});
if (built.status !== 0) throw new Error("the build failed");
const nodeOptions = shippedNodeOptions.join(" ");

const dir = await mkdtemp(join(tmpdir(), "autoscan-bench-service-"));
// The library fills from the disk after each scan, as Plex's does, so the landed check finds what was scanned.
const plex = await startFakePlex({
  sections: [{ key: "2", title: "TV Shows", type: "show", locations: ["/data/TV"] }],
  toLocal: (path) => (path.startsWith("/data/TV/") ? join(dir, "media", path.slice("/data/TV/".length)) : undefined),
});
try {
  console.log(
    `Server as in the image: Node options ${nodeOptions || "none"}, ${describeAllocator()}; ` +
      `${String(CONNECTIONS)} connections`,
  );

  let quietRate = Number.NaN;
  if (only.includes("idle")) {
    const idle = await startServer("idle", 600);
    await new Promise((resolve) => setTimeout(resolve, 3000));
    console.log(`1. RSS idle after start: ${mb(rssOf(idle.process))}`);
    const quiet = await load(idle.port, SECONDS, 0);
    quietRate = quiet.count / quiet.elapsedS;
    report("2. webhooks, dispatch idle (SERVER_SCAN_DELAY 600)", quiet);
    await stop(idle);
  }

  if (only.includes("busy")) {
    const busy = await startServer("busy", 1);
    const running = await load(busy.port, SECONDS, 0);
    report("3. webhooks, dispatch running (SERVER_SCAN_DELAY 1)", running);
    const ratio = quietRate / (running.count / running.elapsedS);
    console.log(`   intake with dispatch running is ${ratio.toFixed(2)}× slower than idle (floor ≤ 1.5×); Plex got ${String(plex.scans.length)} scans`);
    let sent = running.count;
    const total = Number(process.env.BENCH_TOTAL ?? 100_000);
    const loading = peakOf(busy.process);
    while (sent < total) sent += (await load(busy.port, 60, sent, total - sent)).count;
    const loaded = rssOf(busy.process);
    const loadPeak = loading.stop();
    const loadEnd = Date.now();
    const dispatching = peakOf(busy.process);
    const drained = await drain(busy.port, 120_000);
    const emptied = rssOf(busy.process);
    const dispatchPeak = dispatching.stop();
    const drainedAt = Date.now();
    await sleepUntil(loadEnd + 60_000);
    const minuteAfterLoad = rssOf(busy.process);
    await sleepUntil(drainedAt + Number(process.env.BENCH_AFTER_MS ?? 60_000));
    console.log(
      `4. RSS with ${String(sent)} accepted requests (default history limits): highest ${mb(loadPeak)} during the load ` +
        `(sampled every 250 ms), ${mb(loaded)} at its end; highest ${mb(dispatchPeak)} while the queue was dispatched, ` +
        `${mb(emptied)} once it ${drained ? "drained" : "had not drained after 120 s"}; ` +
        `${mb(minuteAfterLoad)} a minute after the last request, ${mb(rssOf(busy.process))} a minute after the queue drained; ` +
        `Plex got ${String(plex.scans.length)} scans`,
    );
    await stop(busy);
  }

  if (only.includes("backlog")) {
    plex.setDown(503);
    const backlog = await startServer("backlog", 1);
    const folders = 30_000;
    await load(backlog.port, 600, 0, folders, (n) => deletePayload(n));
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const scansBefore = plex.scans.length;
    plex.setDown(false);
    const during = await load(backlog.port, SECONDS, 0);
    const dispatched = plex.scans.length - scansBefore;
    report(`5. webhooks while ${String(folders)} due folders are dispatched after a Plex outage`, during);
    console.log(`   meanwhile ${String(dispatched)} folders were scanned`);
    await stop(backlog);
  }
} finally {
  await plex.close();
  await rm(dir, { recursive: true, force: true });
}

interface Server {
  readonly process: ChildProcess;
  readonly port: number;
}

async function startServer(name: string, scanDelay: number): Promise<Server> {
  const home = join(dir, name);
  await mkdir(home, { recursive: true });
  const port = await freePort();
  const config = {
    SERVER_PASS: PASS,
    SERVER_PORT: port,
    SERVER_IP: "127.0.0.1",
    PLEX_LOCAL_URL: plex.url,
    PLEX_TOKEN: plex.token,
    PLEX_ANALYZE_TYPE: "off",
    SERVER_SCAN_DELAY: scanDelay,
    SERVER_FILE_CHECK_DELAY: 1,
    ...(process.env.BENCH_NO_LANDED ? { SERVER_CONFIRM_LANDED: false } : {}),
    SERVER_PATH_MAPPINGS: { "/data/TV/": ["/tv/"] },
    SERVER_FILE_EXIST_PATH_MAPPINGS: { [`${join(dir, "media")}/`]: ["/data/TV/"] },
  };
  await writeFile(join(home, "config.json"), JSON.stringify(config, null, 2));
  const child = spawn(
    process.execPath,
    [...nodeOptions.split(/\s+/).filter(Boolean), join(root, "dist/cli/main.js"), "server", "--config", join(home, "config.json")],
    { stdio: ["ignore", "ignore", "inherit"], env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...shippedEnv } },
  );
  for (let i = 0; i < 300; i++) {
    if (await fetch(`http://127.0.0.1:${String(port)}/health`).then((r) => r.ok, () => false)) return { process: child, port };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  child.kill("SIGKILL");
  throw new Error(`the ${name} server did not become ready`);
}

/** Waits until nothing is pending (`queue_count` 0), at most `ms`. */
async function drain(port: number, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    const answer = await fetch(`http://127.0.0.1:${String(port)}/api/${PASS}?cmd=queue_count`).then((r) => r.json(), () => ({}));
    if ((answer as { queue_count?: number }).queue_count === 0) return true;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  return false;
}

async function stop(server: Server): Promise<void> {
  const exited = new Promise((resolve) => server.process.once("exit", resolve));
  server.process.kill("SIGTERM");
  await exited;
}

/** `seconds` of load, or until `limit` requests were sent, from request number `from` on. */
async function load(
  port: number,
  seconds: number,
  from: number,
  limit = Number.POSITIVE_INFINITY,
  body: (n: number) => string = imported,
): Promise<RunResult> {
  const connections: Connection[] = await Promise.all(Array.from({ length: CONNECTIONS }, () => openConnection(port)));
  let counter = from;
  const result = await runFor(seconds, connections, () => requestBytes(body(counter++), PASS), limit);
  connections.forEach((connection) => connection.close());
  return result;
}

/** An EpisodeFileDelete in its own season folder: no file check, one folder each. */
function deletePayload(n: number): string {
  return JSON.stringify({
    eventType: "EpisodeFileDelete",
    instanceName: "Sonarr",
    series: { id: n, title: `Old Show ${String(n)}`, path: `/tv/Old Show ${String(n)}`, tvdbId: n, type: "standard" },
    episodes: [{ id: n, episodeNumber: 1, seasonNumber: 1, title: "Pilot" }],
    episodeFile: { id: n, relativePath: `Season 01/Old Show ${String(n)} - S01E01.mkv`, quality: "WEBDL-1080p" },
    deleteReason: "upgrade",
  });
}

/** A Sonarr import as it happens: the file is written, then the webhook is sent (so the file check finds it). */
function imported(n: number): string {
  const body = payload(n, SHOWS);
  const { series, episodeFile } = JSON.parse(body) as { series: { path: string }; episodeFile: { relativePath: string } };
  const local = join(dir, "media", series.path.replace(/^\/tv\//, ""), episodeFile.relativePath);
  mkdirSync(join(local, ".."), { recursive: true });
  writeFileSync(local, "");
  return body;
}

function rssOf(child: ChildProcess): number {
  try {
    const status = readFileSync(`/proc/${String(child.pid)}/status`, "utf8");
    return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
  } catch {
    return 0;
  }
}

/** The highest RSS of `child` from now until `stop()`, read every 250 ms. */
function peakOf(child: ChildProcess): { stop(): number } {
  let peak = rssOf(child);
  const timer = setInterval(() => (peak = Math.max(peak, rssOf(child))), 250);
  return {
    stop() {
      clearInterval(timer);
      return Math.max(peak, rssOf(child));
    },
  };
}

function sleepUntil(at: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, at - Date.now())));
}

function report(title: string, result: RunResult): void {
  console.log(`${title}, ${result.elapsedS.toFixed(1)} s:`);
  console.log(
    `   requests/s: ${(result.count / result.elapsedS).toFixed(0)}   requests: ${String(result.count)}   non-200: ${String(result.errors)}` +
      `   latency ms: p50 ${percentile(result, 50)}  p99 ${percentile(result, 99)}  max ${percentile(result, 100)}`,
  );
}

function mb(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(0)} MB`;
}
