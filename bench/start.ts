/**
 * Starting, as shipped (`autoscan server` from the build, the image's Node options and allocator settings), five runs
 * each, medians printed (issue "Moving over with a backlog"):
 *  1. start to ready (GET /health 200) and idle RSS 3 s after, with the default config (`config init`, a port);
 *  2. a plex_autoscan `queue.db` of 20,000 waiting rows (peewee's `queueitemmodel`) where the queue goes: start to
 *     ready, how long the import beside it took, idle RSS 40 s after it is done, and the false hung-mount warnings;
 *  3. the same 20,000 requests in autoscan's own format (the queue the import left), restarted: idle RSS 40 s after.
 *
 *   node bench/start.ts                 BENCH_RUNS=3 node bench/start.ts
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "../test/support/free-port.ts";
import { writePlexAutoscanQueue } from "../test/support/plex-autoscan-queue.ts";
import { describeAllocator, shippedEnv, shippedNodeOptions } from "./shipped.ts";

const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const ROWS = 20_000;
/** Idle RSS is read this long after the work ended: past the one collection an idle process makes 10–20 s after. */
const IDLE_MS = 40_000;
const root = fileURLToPath(new URL("..", import.meta.url));
const main = join(root, "dist/cli/main.js");
const built = spawnSync(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.build.json"], { cwd: root, stdio: "inherit" });
if (built.status !== 0) throw new Error("the build failed");

interface Started {
  readonly child: ChildProcess;
  readonly readyMs: number;
  output(): string;
}

async function start(home: string, port: number): Promise<Started> {
  const config = join(home, "config", "config.json");
  const began = performance.now();
  const child = spawn(process.execPath, [...shippedNodeOptions, main, "server", "--config", config, "--data-dir", join(home, "data")], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...shippedEnv },
  });
  let out = "";
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
  for (;;) {
    const status = await fetch(`http://127.0.0.1:${String(port)}/health`).then((r) => r.status, () => 0);
    if (status === 200) return { child, readyMs: performance.now() - began, output: () => out };
    if (performance.now() - began > 60_000) throw new Error(`not ready after 60 s:\n${out}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

async function stop(server: Started): Promise<void> {
  server.child.kill("SIGTERM");
  await new Promise((resolve) => server.child.once("exit", resolve));
}

const rssMiB = (pid: number | undefined): number => {
  const match = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${String(pid)}/status`, "utf8"));
  return Number(match?.[1] ?? 0) / 1024;
};
const median = (values: readonly number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function home(base: string, name: string): Promise<{ dir: string; port: number }> {
  const dir = join(base, name);
  const config = join(dir, "config", "config.json");
  spawnSync(process.execPath, [main, "config", "init", "--config", config], { stdio: "ignore" });
  const port = await freePort();
  const values = JSON.parse(readFileSync(config, "utf8")) as Record<string, unknown>;
  writeFileSync(config, JSON.stringify({ ...values, SERVER_IP: "127.0.0.1", SERVER_PORT: port }, null, 2));
  mkdirSync(join(dir, "data"), { recursive: true });
  return { dir, port };
}

const base = await mkdtemp(join(tmpdir(), "autoscan-bench-start-"));
try {
  console.log(`Server as in the image: Node options ${shippedNodeOptions.join(" ") || "none"}, ${describeAllocator()}; ${String(RUNS)} runs each, medians`);
  const ready: number[] = [];
  const idle: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const { dir, port } = await home(base, `default-${String(i)}`);
    const server = await start(dir, port);
    ready.push(server.readyMs);
    await sleep(3_000);
    idle.push(rssMiB(server.child.pid));
    await stop(server);
  }
  console.log(`1. default config: start to ready ${median(ready).toFixed(0)} ms, idle RSS ${median(idle).toFixed(1)} MiB ` +
    `(runs: ${ready.map((ms) => ms.toFixed(0)).join(", ")} ms; ${idle.map((mib) => mib.toFixed(1)).join(", ")} MiB)`);

  const importReady: number[] = [];
  const importTook: number[] = [];
  const importIdle: number[] = [];
  const ownIdle: number[] = [];
  let warnings = 0;
  for (let i = 0; i < RUNS; i++) {
    const { dir, port } = await home(base, `import-${String(i)}`);
    writePlexAutoscanQueue(join(dir, "data", "queue.db"), Array.from({ length: ROWS }, (_, n) => `/data/TV/Show ${String(n % 2_000)}/Season 01/Show - S01E${String(n)}.mkv`));
    const server = await start(dir, port);
    importReady.push(server.readyMs);
    const began = performance.now();
    while (!/Imported \d+ scan request/.test(server.output())) {
      if (performance.now() - began > 120_000) throw new Error(`the import did not finish:\n${server.output()}`);
      await sleep(20);
    }
    importTook.push(Number(/; (\d+\.\d) s\./.exec(server.output())?.[1] ?? Number.NaN) * 1000);
    await sleep(IDLE_MS);
    importIdle.push(rssMiB(server.child.pid));
    warnings += (server.output().match(/did not answer|does not answer/g) ?? []).length;
    await stop(server);
    const own = await start(dir, port);
    await sleep(IDLE_MS);
    ownIdle.push(rssMiB(own.child.pid));
    await stop(own);
  }
  console.log(
    `2. ${ROWS.toLocaleString("en-US")} plex_autoscan rows at first start: ready ${median(importReady).toFixed(0)} ms, ` +
      `import done ${(median(importTook) / 1000).toFixed(1)} s after, idle RSS then ${median(importIdle).toFixed(1)} MiB; ` +
      `false hung-mount warnings in ${String(RUNS)} runs: ${String(warnings)}`,
  );
  console.log(`3. the same ${ROWS.toLocaleString("en-US")} requests in autoscan's own format, restarted: idle RSS ${median(ownIdle).toFixed(1)} MiB ` +
    `(the import's figure is ${((median(importIdle) / median(ownIdle) - 1) * 100).toFixed(0)} % above)`);
} finally {
  await rm(base, { recursive: true, force: true });
}
