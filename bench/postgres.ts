/**
 * The queue in PostgreSQL (issue 15), real `autoscan server` processes on a throwaway cluster of the machine's own
 * PostgreSQL (test/support/postgres-cluster.ts; Debian's `postgresql` package). Prints:
 *  1. webhooks/s and latency into ONE instance, and into THREE instances on one database (the connections spread
 *     round-robin over them), dispatch idle (SERVER_SCAN_DELAY 600): every request committed in PostgreSQL before
 *     its 200;
 *  2. takeover: instance X holds claims on due folders (a slow Plex: 2 s per scan) and is SIGKILLed while a scan of
 *     its is in flight; the time from the kill to the survivor's first scan of one of X's folders, with
 *     SERVER_LEASE_SECONDS 5 and 15 (the default).
 * The servers run from the sources with the image's Node options (bench/shipped.ts). Figures vary with load: run on
 * an otherwise idle machine.
 *
 *   node bench/postgres.ts          BENCH_SECONDS=15 BENCH_CONNECTIONS=40 node bench/postgres.ts
 *   BENCH_ONLY=intake node bench/postgres.ts     BENCH_ONLY=takeover BENCH_TAKEOVER_RUNS=5 node bench/postgres.ts
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import pg from "pg";
import { findPostgresBin, startPostgresCluster } from "../test/support/postgres-cluster.ts";
import { CLI_MAIN } from "../test/support/run-cli.ts";
import { INSTANCES_PASS, startServiceInstances, type ServiceInstance, type ServiceInstances } from "../test/support/service-instances.ts";
import { openConnection, payload, percentile, requestBytes, runFor, type Connection, type RunResult } from "./load.ts";
import { shippedEnv, shippedNodeOptions } from "./shipped.ts";

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 20);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const TAKEOVER_RUNS = Number(process.env.BENCH_TAKEOVER_RUNS ?? 2);
/** BENCH_ONLY=intake or takeover runs only that part (default both). */
const only = (process.env.BENCH_ONLY ?? "intake,takeover").split(",");
const command = [process.execPath, ...shippedNodeOptions, CLI_MAIN];

const found = findPostgresBin();
if (!found.ok) {
  console.log(`skipped: ${found.reason}`);
  process.exit(0);
}
const cluster = await startPostgresCluster(found);
let databases = 0;
try {
  console.log(
    `PostgreSQL ${String(found.major)} (fsync on, defaults), ${String(CONNECTIONS)} connections, ${String(SECONDS)} s each; ` +
      `servers from the sources, Node options ${shippedNodeOptions.join(" ") || "none"}`,
  );
  if (only.includes("intake")) {
    const one = await intake(["X"]);
    report("1a. webhooks into ONE instance", one);
    const three = await intake(["X", "Y", "Z"]);
    report("1b. webhooks into THREE instances on one database (round-robin)", three);
    console.log(`    three instances take ${(three.count / three.elapsedS / (one.count / one.elapsedS)).toFixed(2)}× the rate of one`);
  }
  for (const lease of only.includes("takeover") ? [5, 15] : []) {
    const times: number[] = [];
    for (let run = 0; run < TAKEOVER_RUNS; run++) times.push(await takeover(lease));
    const sorted = [...times].sort((a, b) => a - b);
    console.log(
      `2. takeover with SERVER_LEASE_SECONDS ${String(lease)}: SIGKILL → survivor's first scan of the dead instance's folder ` +
        `${sorted.map((ms) => `${(ms / 1000).toFixed(2)} s`).join(", ")} (${String(TAKEOVER_RUNS)} runs)`,
    );
  }
} finally {
  await cluster.stop();
}

async function newDatabase(): Promise<string> {
  const name = `autoscan_bench_${String(++databases)}`;
  const admin = new pg.Client({ connectionString: cluster.url });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${name}"`);
  } finally {
    await admin.end();
  }
  const url = new URL(cluster.url);
  url.pathname = `/${name}`;
  return url.toString();
}

/** SECONDS of Sonarr imports from CONNECTIONS keep-alive clients, spread round-robin over the instances. */
async function intake(names: readonly string[]): Promise<RunResult> {
  const set = await startServiceInstances({
    databaseUrl: await newDatabase(),
    names,
    config: { SERVER_SCAN_DELAY: 600 },
    command,
    env: shippedEnv,
    logLevel: "WARNING",
    keepLogs: false,
  });
  try {
    await Promise.all(set.instances.map((instance) => instance.start()));
    const connections: Connection[] = await Promise.all(
      Array.from({ length: CONNECTIONS }, (_, i) => openConnection(set.instances[i % set.instances.length]!.port)),
    );
    let n = 0;
    // A second of warm-up (JIT, pools), then the measure.
    await runFor(1, connections, () => requestBytes(payload(n++), INSTANCES_PASS));
    const result = await runFor(SECONDS, connections, () => requestBytes(payload(n++), INSTANCES_PASS));
    connections.forEach((connection) => connection.close());
    return result;
  } finally {
    await set.close();
  }
}

/**
 * X alone takes 12 folders and starts scanning them (Plex answers each after 2 s); Y starts once X holds them all,
 * finds them claimed, and waits. X is SIGKILLed the moment one of its scans reaches Plex. Resolves with the time
 * from the kill to Y's first scan of a folder X held.
 */
async function takeover(leaseSeconds: number): Promise<number> {
  const url = await newDatabase();
  let killAt = 0;
  let armed = false;
  let set: ServiceInstances | undefined;
  set = await startServiceInstances({
    databaseUrl: url,
    names: ["X", "Y"],
    config: { SERVER_SCAN_DELAY: 0, SERVER_LEASE_SECONDS: leaseSeconds, SERVER_SCAN_CONCURRENCY: 1 },
    scanMs: () => 2_000,
    onScan: (instance: ServiceInstance) => {
      if (!armed || instance.name !== "X" || killAt) return;
      killAt = Date.now();
      instance.process?.kill("SIGKILL");
    },
    command,
    env: shippedEnv,
    logLevel: "WARNING",
    keepLogs: false,
  });
  const db = new pg.Client({ connectionString: url });
  try {
    const [x, y] = set.instances as [ServiceInstance, ServiceInstance];
    const folders = Array.from({ length: 12 }, (_, i) => `Show ${String(i)}`);
    for (const show of folders) {
      await mkdir(join(set.media, "TV", show, "Season 01"), { recursive: true });
      await writeFile(join(set.media, "TV", show, "Season 01", `${show} - S01E01.mkv`), "x");
    }
    await x.start();
    const xId = (await x.health())?.instance ?? "";
    for (const show of folders) {
      const body = {
        eventType: "Download",
        series: { id: 1, title: show, path: `/tv/${show}` },
        episodeFile: { id: 1, relativePath: `Season 01/${show} - S01E01.mkv` },
      };
      const res = await fetch(`${x.url}/${INSTANCES_PASS}/sonarr`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
      if (!res.ok) throw new Error(`webhook answered ${String(res.status)}`);
    }
    await db.connect();
    // X has checked every folder and is scanning (it holds the folders it claimed until it finishes them).
    await until("X to check every folder and scan", async () => {
      const unchecked = await db.query<{ n: string }>("SELECT COUNT(*) AS n FROM autoscan.items WHERE state = 'pending' AND scan_folder IS NULL");
      return Number(unchecked.rows[0]?.n) === 0 && x.plexFront.inFlight(/refresh$/).length > 0;
    }, 30_000);
    await y.start();
    armed = true;
    await until("X to be killed during a scan", () => killAt > 0, 30_000);
    const held = await db.query<{ folder: string }>("SELECT folder FROM autoscan.items WHERE state = 'pending' AND lease_owner = $1", [xId]);
    const xFolders = new Set(held.rows.map((row) => row.folder));
    const first = await until(
      "Y to scan one of X's folders",
      () => set?.scans().find((scan) => scan.instance === "Y" && scan.at >= killAt && xFolders.has(scan.path)),
      (leaseSeconds + 30) * 1000,
    );
    return first.at - killAt;
  } finally {
    await db.end().catch(() => undefined);
    await set.close();
    set = undefined;
  }
}

async function until<T>(what: string, probe: () => Promise<T | undefined | false> | T | undefined | false, ms: number): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > end) throw new Error(`${what}: not within ${String(ms / 1000)} s`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function report(title: string, result: RunResult): void {
  console.log(`${title}, ${result.elapsedS.toFixed(1)} s:`);
  console.log(
    `    requests/s: ${(result.count / result.elapsedS).toFixed(0)}   requests: ${String(result.count)}   non-200: ${String(result.errors)}` +
      `   latency ms: p50 ${percentile(result, 50)}  p99 ${percentile(result, 99)}  max ${percentile(result, 100)}`,
  );
}
