/**
 * The folder watchers (issue 27, `WATCH`), on a tree of 200,000 files in 20,000 folders generated on tmpfs (/dev/shm):
 *  1. `events`: start-up walk (≤ 30 s), extra RSS of the watcher (≤ 40 MB), a new file noticed < 2 s after
 *     MIN_AGE_SECONDS;
 *  2. `poll`: one walk (≤ 20 s, ≤ 1 core while it runs; the first with nothing known, then one with the state known),
 *     extra RSS (≤ 40 MB), the walk state on disk (≤ 20 MB);
 *  3. a burst through the real service (`autoscan server`, .ts sources, a fake Plex, WATCH in `events` mode,
 *     SERVER_SCAN_DELAY 5, MIN_AGE_SECONDS 1): 5,000 files renamed at once from a staging folder into 100 library
 *     folders → scans (≤ 100), the last one within SERVER_SCAN_DELAY + 10 s of the move.
 * 1 and 2 run the watcher alone in a child process (this file with `--child`, the image's Node options and allocator
 * setting): `createFolderWatcher` with the real disk probe, the kernel's notifications (events) and a real state file;
 * RSS is taken after the imports and after the first walk, each after the collection the shipped service makes once it
 * is idle (`core/memory-trim.ts`: a major, last-resort GC, which also gives back the young generation a walk grew), so
 * the figure is what the watcher keeps;
 *  4. the `events` watcher in the real service as shipped (`dist/`): RSS idle without WATCH and with it, same tree;
 *  5. 50,000 files appearing at once in one folder (a folder moved into the library, `events`, MIN_AGE_SECONDS 1),
 *     through the real service: the longest event-loop stall (the service's own monitorEventLoopDelay, prom-client's
 *     `nodejs_eventloop_lag_max_seconds` read every 250 ms; ≤ 100 ms), the slowest `/health` answer meanwhile, the
 *     scans (1), and whether a mount was called unanswering;
 *  6. the same 50,000 files with the watcher alone (`burst50k-watcher`, in this process: `createFolderWatcher`, the real
 *     disk probe, `events`, MIN_AGE_SECONDS 1, every change stored at once): the longest event-loop stall until all
 *     are reported and the watcher has stopped (its state saved), the watcher's own part of 5 without the queue's.
 *
 *   node bench/watch.ts                 BENCH_ONLY=events,poll,service,burst,burst50k,burst50k-watcher node bench/watch.ts
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, unlinkSync, writeFileSync } from "node:fs";
import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { fileURLToPath } from "node:url";

const SELF = fileURLToPath(import.meta.url);
const SHOWS = 1_000;
/** 1,000 shows × (1 + 19 seasons) = 20,000 folders; 19,000 seasons × 10 episodes + 1,000 shows × 10 extras = 200,000 files. */
const SEASONS = 19;
const EPISODES = 10;
const EXTRAS = 10;
const MIN_AGE_S = 1;
/** The poll watcher's interval: long, and held by the bench (the second walk starts when the bench says). */
const POLL_MS = 3_600_000;

interface ChildResult {
  readonly mode: "events" | "poll";
  readonly rssBefore: number;
  readonly rssAfter: number;
  /** JS heap in use after the first walk less before (part of the extra RSS: what the watcher keeps). */
  readonly heapKept: number;
  readonly peakRss: number;
  readonly walkS: number;
  readonly walkCores: number;
  readonly startupS: number;
  readonly stateBytes: number;
  readonly folders: number;
  readonly files: number;
  readonly noticeS?: readonly number[];
  readonly secondWalkS?: number;
  readonly secondWalkCores?: number;
  readonly rssAfterSecond?: number;
  readonly problem?: string;
}

// ——— the parent ———

async function main(): Promise<void> {
  const only = (process.env.BENCH_ONLY ?? "events,poll,service,burst,burst50k,burst50k-watcher").split(",");
  const children = new Set<ChildProcess>();
  const dirs: string[] = [];
  let cleaned: Promise<void> | undefined;
  const cleanup = (): Promise<void> =>
    (cleaned ??= (async () => {
      await Promise.all([...children].map((child) => stopChild(child)));
      await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
    })());
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => void cleanup().finally(() => process.exit(130)));
  }

  const shm = tmpfsRoot();
  if (!shm.tmpfs) console.log(`(no tmpfs at /dev/shm: the tree is generated in ${shm.path} instead)`);
  try {
    if (only.includes("events") || only.includes("poll") || only.includes("service")) {
      const base = await mkdtemp(join(shm.path, "autoscan-bench-watch-"));
      dirs.push(base);
      const states = await mkdtemp(join(tmpdir(), "autoscan-bench-watch-state-"));
      dirs.push(states);
      const tree = join(base, "TV");
      const started = performance.now();
      generateTree(tree);
      console.log(
        `tree: ${(SHOWS * (SEASONS * EPISODES + EXTRAS)).toLocaleString("en")} files in ${(SHOWS * (SEASONS + 1)).toLocaleString("en")} folders on ` +
          `${shm.tmpfs ? "tmpfs" : "disk"}, written in ${seconds(performance.now() - started)}; MIN_AGE_SECONDS ${String(MIN_AGE_S)}`,
      );
      for (const mode of ["events", "poll"] as const) {
        if (!only.includes(mode)) continue;
        const result = await runWatcherChild(mode, tree, join(states, `${mode}.state`), children);
        if (result.problem) console.log(`watch ${mode}: the watcher failed: ${result.problem}`);
        printChild(result);
      }
      if (only.includes("service")) await inService(tree, dirs, children);
    }
    if (only.includes("burst")) await burst(shm.path, dirs, children);
    if (only.includes("burst50k")) await burstInOneFolder(shm.path, dirs, children);
    if (only.includes("burst50k-watcher")) await burstToWatcherAlone(shm.path, dirs);
  } finally {
    await cleanup();
  }
}

function printChild(r: ChildResult): void {
  const m = `watch ${r.mode}:`;
  const extra = r.rssAfter - r.rssBefore;
  const known = `${r.folders.toLocaleString("en")} folders, ${r.files.toLocaleString("en")} files known`;
  if (r.mode === "events") {
    console.log(`${m} start-up walk ${s(r.startupS)} (≤ 30 s)${over(r.startupS, 30)}; the walk itself ${s(r.walkS)} at ${r.walkCores.toFixed(2)} core; ${known}`);
  } else {
    console.log(`${m} first walk (nothing known) ${s(r.walkS)} (≤ 20 s)${over(r.walkS, 20)} at ${r.walkCores.toFixed(2)} core (≤ 1)${over(r.walkCores, 1)}; ${known}`);
    if (r.secondWalkS !== undefined && r.secondWalkCores !== undefined) {
      console.log(`${m} walk with the state known ${s(r.secondWalkS)} (≤ 20 s)${over(r.secondWalkS, 20)} at ${r.secondWalkCores.toFixed(2)} core (≤ 1)${over(r.secondWalkCores, 1)}`);
    }
  }
  console.log(
    `${m} extra RSS ${mb(extra)} (≤ 40 MB)${over(extra, 40 * 1024 * 1024)}: ${mb(r.rssBefore)} after the imports, ${mb(r.rssAfter)} after the first walk` +
      `${r.rssAfterSecond === undefined ? "" : `, ${mb(r.rssAfterSecond)} after the second`} (each after the idle collection); JS heap in use +${mb(r.heapKept)}; peak ${mb(r.peakRss)}`,
  );
  const stateLine = `${m} walk state on disk ${mb(r.stateBytes, 1)}`;
  console.log(r.mode === "poll" ? `${stateLine} (≤ 20 MB)${over(r.stateBytes, 20 * 1024 * 1024)}` : stateLine);
  if (r.noticeS) {
    const worst = Math.max(...r.noticeS);
    console.log(
      `${m} a new file noticed ${s(worst)} after MIN_AGE_SECONDS (< 2 s)${worst >= 2 ? "  ← MISSED" : ""} ` +
        `(worst of ${String(r.noticeS.length)}: ${r.noticeS.map((x) => x.toFixed(2)).join(", ")} s)`,
    );
  }
}

/** 1,000 shows, each with 19 season folders of 10 episodes and 10 files of its own. */
function generateTree(tree: string): void {
  for (let show = 0; show < SHOWS; show++) {
    const showDir = join(tree, `Show ${String(show).padStart(4, "0")}`);
    mkdirSync(showDir, { recursive: true });
    for (let extra = 0; extra < EXTRAS; extra++) touch(join(showDir, `extra ${String(extra)}.nfo`));
    for (let season = 1; season <= SEASONS; season++) {
      const seasonDir = join(showDir, `Season ${String(season).padStart(2, "0")}`);
      mkdirSync(seasonDir);
      for (let episode = 1; episode <= EPISODES; episode++) touch(join(seasonDir, `Show ${String(show)} - S${pad(season)}E${pad(episode)}.mkv`));
    }
  }
}

function touch(path: string, content = "x"): void {
  const fd = openSync(path, "w");
  if (content) writeFileSync(fd, content);
  closeSync(fd);
}

function runWatcherChild(mode: "events" | "poll", tree: string, stateFile: string, children: Set<ChildProcess>): Promise<ChildResult> {
  return (async () => {
    const { shippedEnv, shippedNodeOptions } = await import("./shipped.ts");
    const child = spawn(process.execPath, [...shippedNodeOptions, "--expose-gc", SELF, "--child", mode, tree, stateFile], {
      stdio: ["ignore", "inherit", "inherit", "ipc"],
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...shippedEnv },
    });
    children.add(child);
    try {
      return await new Promise<ChildResult>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`the ${mode} watcher gave no figures within 5 minutes`)), 300_000);
        child.on("message", (message) => {
          clearTimeout(timer);
          resolve(message as ChildResult);
        });
        child.once("exit", (code, signal) => {
          clearTimeout(timer);
          reject(new Error(`the ${mode} watcher exited with ${String(code ?? signal)} before its figures`));
        });
      });
    } finally {
      await stopChild(child);
      children.delete(child);
    }
  })();
}

/**
 * The `events` watcher inside the real service as shipped (the build in `dist/`, the image's Node options and allocator
 * setting, the default config plus a fake Plex): RSS once idle, started without WATCH and then with WATCH over the same
 * tree. Idle means 25 s after the start (or after the watcher's first walk): the service's own idle collection
 * (`core/memory-trim.ts`, every 10 s) has run, as it does for any user.
 */
async function inService(tree: string, dirs: string[], children: Set<ChildProcess>): Promise<void> {
  const [{ startFakePlex }, { freePort }, { shippedEnv, shippedNodeOptions }] = await Promise.all([
    import("../test/support/fake-plex.ts"),
    import("../test/support/free-port.ts"),
    import("./shipped.ts"),
  ]);
  const root = fileURLToPath(new URL("..", import.meta.url));
  const built = spawnSync(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.build.json"], { cwd: root, stdio: "inherit" });
  if (built.status !== 0) throw new Error("the build failed");
  const IDLE_MS = 25_000;
  const PASS = "c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0";
  const plex = await startFakePlex({ sections: [{ key: "2", title: "TV Shows", type: "show", locations: ["/data/TV"] }] });
  try {
    const rss: number[] = [];
    let walkS = 0;
    for (const watching of [false, true]) {
      const home = await mkdtemp(join(tmpdir(), "autoscan-bench-watch-service-"));
      dirs.push(home);
      const port = await freePort();
      writeConfig(home, PASS, port, plex, {
        SERVER_FILE_EXIST_PATH_MAPPINGS: { [`${tree}/`]: ["/data/TV/"] },
        ...(watching ? { WATCH: { library: { PATHS: [tree], MODE: "events" } } } : {}),
      });
      const server = spawn(
        process.execPath,
        [...shippedNodeOptions, join(root, "dist/cli/main.js"), "server", "--config", join(home, "config.json"), "--data-dir", join(home, "data"), "--logfile", "none"],
        { stdio: ["ignore", "pipe", "pipe"], env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...shippedEnv } },
      );
      children.add(server);
      let output = "";
      server.stdout.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
      server.stderr.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
      const startedAt = performance.now();
      const ready = async (): Promise<boolean> =>
        (!watching || output.includes("is watching")) && (await fetch(`http://127.0.0.1:${String(port)}/health`).then((r) => r.ok, () => false));
      for (let waited = 0; !(await ready()); waited += 100) {
        if (server.exitCode !== null || waited > 120_000) throw new Error(`the service did not start${watching ? " watching" : ""}:\n${output.slice(-3000)}`);
        await sleep(100);
      }
      if (watching) walkS = (performance.now() - startedAt) / 1000;
      await sleep(IDLE_MS);
      rss.push(Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${String(server.pid)}/status`, "utf8"))?.[1] ?? 0) * 1024);
      await stopChild(server);
      children.delete(server);
    }
    const [without = 0, withWatch = 0] = rss;
    const extra = withWatch - without;
    console.log(
      `watch events, in the service as shipped: extra RSS ${mb(extra)} (≤ 40 MB)${over(extra, 40 * 1024 * 1024)}: ${mb(without)} without WATCH, ` +
        `${mb(withWatch)} watching the tree (each ${String(IDLE_MS / 1000)} s after the start${walkS ? `, the start-up walk done in ${s(walkS)}` : ""})`,
    );
  } finally {
    await plex.close();
  }
}

/** 5,000 files renamed at once into 100 library folders, through the real service with WATCH in `events` mode. */
async function burst(tmpfs: string, dirs: string[], children: Set<ChildProcess>): Promise<void> {
  const [{ startFakePlex }, { freePort }, { childEnv, CLI_MAIN }] = await Promise.all([
    import("../test/support/fake-plex.ts"),
    import("../test/support/free-port.ts"),
    import("../test/support/run-cli.ts"),
  ]);
  const PASS = "b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0";
  const SCAN_DELAY_S = 5;
  const FOLDERS = 100;
  const FILES = 5_000;
  const base = await mkdtemp(join(tmpfs, "autoscan-bench-watch-burst-"));
  dirs.push(base);
  const home = await mkdtemp(join(tmpdir(), "autoscan-bench-watch-burst-"));
  dirs.push(home);
  const library = join(base, "media", "TV");
  const staging = join(base, "staging");
  const moves: [string, string][] = [];
  for (let folder = 0; folder < FOLDERS; folder++) {
    const show = `Burst Show ${String(folder)}`;
    const season = join(library, show, "Season 01");
    mkdirSync(season, { recursive: true });
    for (let old = 1; old <= 3; old++) touch(join(season, `${show} - S00E${pad(old)}.mkv`));
    const stage = join(staging, show);
    mkdirSync(stage, { recursive: true });
    for (let episode = 1; episode <= FILES / FOLDERS; episode++) {
      const name = `${show} - S01E${pad(episode)}.mkv`;
      touch(join(stage, name), "0123456789");
      moves.push([join(stage, name), join(season, name)]);
    }
  }
  const plex = await startFakePlex({
    sections: [{ key: "2", title: "TV Shows", type: "show", locations: ["/data/TV"] }],
    toLocal: (path) => (path.startsWith("/data/TV") ? join(library, path.slice("/data/TV".length)) : undefined),
  });
  try {
    const port = await freePort();
    writeConfig(home, PASS, port, plex, {
      PLEX_ANALYZE_TYPE: "off",
      SERVER_SCAN_DELAY: SCAN_DELAY_S,
      SERVER_FILE_CHECK_DELAY: 1,
      SERVER_FILE_EXIST_PATH_MAPPINGS: { [`${library}/`]: ["/data/TV/"] },
      WATCH: { burst: { PATHS: [library], MODE: "events", MIN_AGE_SECONDS: MIN_AGE_S } },
    });
    const server = spawn(process.execPath, [CLI_MAIN, "server", "--config", join(home, "config.json"), "--data-dir", join(home, "data"), "--logfile", "none"], {
      env: childEnv(),
      stdio: ["ignore", "pipe", "pipe"],
    });
    children.add(server);
    let output = "";
    server.stdout.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
    server.stderr.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
    const api = `http://127.0.0.1:${String(port)}`;
    const ready = async (): Promise<boolean> =>
      output.includes("is watching") && (await fetch(`${api}/health`).then((r) => r.ok, () => false));
    for (let waited = 0; !(await ready()); waited += 100) {
      if (server.exitCode !== null || waited > 60_000) throw new Error(`the service did not start watching:\n${output.slice(-3000)}`);
      await sleep(100);
    }
    await sleep(500);
    const scansBefore = plex.scans.length;

    const movedAt = performance.now();
    for (const [from, to] of moves) renameSync(from, to);
    const moveMs = performance.now() - movedAt;
    let lastScanAt = movedAt;
    let seen = scansBefore;
    const queueCount = async (): Promise<number> =>
      ((await fetch(`${api}/api/${PASS}?cmd=queue_count`).then((r) => r.json(), () => ({}))) as { queue_count?: number }).queue_count ?? -1;
    const floorMs = (SCAN_DELAY_S + 10) * 1000;
    // Until the floor's time and 5 s more have passed, then until nothing is pending and no scan came for 3 s (at most 2 minutes).
    for (let lastCheck = 0; ; ) {
      await sleep(25);
      const now = performance.now();
      if (plex.scans.length !== seen) {
        seen = plex.scans.length;
        lastScanAt = now;
      }
      if (now - movedAt < floorMs + 5_000 || now - lastScanAt < 3_000) continue;
      if (now - movedAt > 120_000) break;
      if (now - lastCheck > 500) {
        lastCheck = now;
        if ((await queueCount()) === 0) break;
      }
    }
    const scans = plex.scans.slice(scansBefore);
    const folders = new Set(scans.map((scan) => scan.path));
    const lastS = (lastScanAt - movedAt) / 1000;
    console.log(
      `watch burst: ${FILES.toLocaleString("en")} files renamed into ${String(FOLDERS)} folders (in ${seconds(moveMs)}) → ${String(scans.length)} scans (≤ ${String(FOLDERS)})` +
        `${over(scans.length, FOLDERS)}, ${String(folders.size)} distinct folders${scans.some((scan) => !scan.inside) ? ", some outside the library" : ""}`,
    );
    console.log(
      scans.length === 0
        ? `watch burst: no scan at all  ← MISSED\n${output.slice(-3000)}`
        : `watch burst: last scan ${s(lastS)} after the move (≤ SERVER_SCAN_DELAY ${String(SCAN_DELAY_S)} + 10 = ${String(SCAN_DELAY_S + 10)} s)${over(lastS, SCAN_DELAY_S + 10)}`,
    );
    const unscanned = FOLDERS - [...folders].filter((path) => path.includes("Burst Show")).length;
    if (unscanned > 0) console.log(`watch burst: ${String(unscanned)} of the ${String(FOLDERS)} folders got no scan  ← MISSED`);
    await stopChild(server);
    children.delete(server);
  } finally {
    await plex.close();
  }
}

/** 50,000 files appearing at once in one library folder (moved in as a folder), through the real service. */
async function burstInOneFolder(tmpfs: string, dirs: string[], children: Set<ChildProcess>): Promise<void> {
  const [{ startFakePlex }, { freePort }, { childEnv, CLI_MAIN }] = await Promise.all([
    import("../test/support/fake-plex.ts"),
    import("../test/support/free-port.ts"),
    import("../test/support/run-cli.ts"),
  ]);
  const PASS = "b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1";
  const FILES = 50_000;
  const base = await mkdtemp(join(tmpfs, "autoscan-bench-watch-50k-"));
  dirs.push(base);
  const home = await mkdtemp(join(tmpdir(), "autoscan-bench-watch-50k-"));
  dirs.push(home);
  const library = join(base, "media", "TV");
  mkdirSync(join(library, "Big Show"), { recursive: true });
  const staged = join(base, "staging", "Season 01");
  mkdirSync(staged, { recursive: true });
  for (let file = 0; file < FILES; file++) touch(join(staged, `Big Show - E${String(file).padStart(5, "0")}.mkv`), "0123456789");
  const plex = await startFakePlex({
    sections: [{ key: "2", title: "TV Shows", type: "show", locations: ["/data/TV"] }],
    toLocal: (path) => (path.startsWith("/data/TV") ? join(library, path.slice("/data/TV".length)) : undefined),
  });
  try {
    const port = await freePort();
    writeConfig(home, PASS, port, plex, {
      PLEX_ANALYZE_TYPE: "off",
      SERVER_SCAN_DELAY: 1,
      SERVER_FILE_CHECK_DELAY: 1,
      SERVER_METRICS: true,
      SERVER_FILE_EXIST_PATH_MAPPINGS: { [`${library}/`]: ["/data/TV/"] },
      WATCH: { burst: { PATHS: [library], MODE: "events", MIN_AGE_SECONDS: 1 } },
    });
    const server = spawn(process.execPath, [CLI_MAIN, "server", "--config", join(home, "config.json"), "--data-dir", join(home, "data"), "--logfile", "none"], {
      env: childEnv(),
      stdio: ["ignore", "pipe", "pipe"],
    });
    children.add(server);
    let output = "";
    server.stdout.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
    server.stderr.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
    const api = `http://127.0.0.1:${String(port)}`;
    const ready = async (): Promise<boolean> => output.includes("is watching") && (await fetch(`${api}/health`).then((r) => r.ok, () => false));
    for (let waited = 0; !(await ready()); waited += 100) {
      if (server.exitCode !== null || waited > 60_000) throw new Error(`the service did not start watching:\n${output.slice(-3000)}`);
      await sleep(100);
    }
    const lagMax = async (): Promise<number> => {
      const text = await fetch(`${api}/${PASS}/metrics`).then((r) => r.text(), () => "");
      return Number(/^nodejs_eventloop_lag_max_seconds (\S+)/m.exec(text)?.[1] ?? 0);
    };
    await sleep(1_000);
    await lagMax(); // the histogram starts afresh at each scrape
    const folder = "/data/TV/Big Show/Season 01";
    const scanned = (): boolean => plex.scans.some((scan) => scan.path === folder);
    /** The longest stall until the folder's scan (the watcher, the store's writes, the dispatcher's claim), and after. */
    let stallS = 0;
    let dispatchStallS = 0;
    let healthMs = 0;
    let done = false;
    const movedAt = performance.now();
    const sampling = (async () => {
      while (!done) {
        const before = !scanned();
        const lag = await lagMax();
        if (before) stallS = Math.max(stallS, lag);
        else dispatchStallS = Math.max(dispatchStallS, lag);
        await sleep(250);
      }
    })();
    const probing = (async () => {
      while (!done) {
        const at = performance.now();
        await fetch(`${api}/health`).catch(() => undefined);
        healthMs = Math.max(healthMs, performance.now() - at);
        await sleep(50);
      }
    })();
    renameSync(staged, join(library, "Big Show", "Season 01"));
    while (performance.now() - movedAt < 120_000 && !scanned()) await sleep(100);
    // A file check of another folder meanwhile: it must not wait on a disk said not to answer.
    await sleep(5_000);
    done = true;
    await Promise.all([sampling, probing]);
    const scans = plex.scans.filter((scan) => scan.path === folder).length;
    const firstS = (performance.now() - movedAt - 5_000) / 1000;
    console.log(
      `watch burst 50k: ${FILES.toLocaleString("en")} files moved into one folder → ${String(scans)} scan(s) of it (1)${scans === 1 ? "" : "  ← MISSED"}, within ${s(firstS)}; ` +
        `longest event-loop stall until the scan ${String(Math.round(stallS * 1000))} ms (≤ 100 ms)${over(stallS, 0.1)}, ` +
        `${String(Math.round(dispatchStallS * 1000))} ms after it; slowest /health ${String(Math.round(healthMs))} ms` +
        `${/does not answer/.test(output) ? "; a mount was called unanswering  ← MISSED" : ""}`,
    );
    await stopChild(server);
    children.delete(server);
  } finally {
    await plex.close();
  }
}

/** 50,000 files moved at once into one folder watched by a watcher alone (no queue, no service). */
async function burstToWatcherAlone(tmpfs: string, dirs: string[]): Promise<void> {
  const [{ systemClock }, { createDiskProbe }, { createFolderWatcher }, { watchFoldersWithKernel }, { captureLog }] = await Promise.all([
    import("../src/core/clock.ts"),
    import("../src/paths/disk-probe.ts"),
    import("../src/watch/folder-watcher.ts"),
    import("../src/watch/kernel-events.ts"),
    import("../test/support/capture-log.ts"),
  ]);
  const FILES = 50_000;
  const base = await mkdtemp(join(tmpfs, "autoscan-bench-watch-alone-"));
  dirs.push(base);
  const library = join(base, "TV");
  mkdirSync(library);
  const { log } = captureLog();
  let reported = 0;
  const watcher = createFolderWatcher({
    name: "burst",
    settings: { paths: [library], mode: "events", pollMs: POLL_MS, minAgeMs: MIN_AGE_S * 1000, wanted: () => true },
    stateFile: join(base, "burst.state"),
    probe: createDiskProbe({ log }),
    clock: systemClock,
    log,
    report: (changes) => {
      reported += changes.length;
      return Promise.resolve();
    },
    watchFolders: watchFoldersWithKernel,
  });
  watcher.start();
  while (watcher.status().state !== "watching") await sleep(20);
  const staged = join(base, "staging", "Season 01");
  mkdirSync(staged, { recursive: true });
  for (let file = 0; file < FILES; file++) touch(join(staged, `Big Show - E${String(file).padStart(5, "0")}.mkv`), "0123456789");
  const delay = monitorEventLoopDelay({ resolution: 5 });
  delay.enable();
  const movedAt = performance.now();
  renameSync(staged, join(library, "Season 01"));
  while (reported < FILES && performance.now() - movedAt < 120_000) await sleep(20);
  const reportedS = (performance.now() - movedAt) / 1000;
  await watcher.stop();
  delay.disable();
  const stallMs = delay.max / 1e6;
  console.log(
    `watch burst 50k, the watcher alone: ${reported.toLocaleString("en")} of ${FILES.toLocaleString("en")} reported${reported === FILES ? "" : "  ← MISSED"} in ${s(reportedS)}; ` +
      `longest event-loop stall until reported and saved ${String(Math.round(stallMs))} ms (≤ 50 ms)${over(stallMs, 50)}`,
  );
}

/** The service's config in `home`: on 127.0.0.1:`port`, the fake Plex, and `extra`. */
function writeConfig(home: string, pass: string, port: number, plex: { url: string; token: string }, extra: Record<string, unknown>): void {
  const config = { SERVER_PASS: pass, SERVER_IP: "127.0.0.1", SERVER_PORT: port, PLEX_LOCAL_URL: plex.url, PLEX_TOKEN: plex.token, ...extra };
  writeFileSync(join(home, "config.json"), JSON.stringify(config));
}

function tmpfsRoot(): { path: string; tmpfs: boolean } {
  try {
    const tmpfs = readFileSync("/proc/self/mountinfo", "utf8")
      .split("\n")
      .some((line) => {
        const [left, right] = line.split(" - ");
        return left?.split(" ")[4] === "/dev/shm" && right?.split(" ")[0] === "tmpfs";
      });
    if (tmpfs) return { path: "/dev/shm", tmpfs: true };
  } catch {
    // not Linux
  }
  return { path: tmpdir(), tmpfs: false };
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
  await exited;
  clearTimeout(timer);
}

// ——— the child: one watcher alone ———

async function watcherChild(mode: "events" | "poll", tree: string, stateFile: string): Promise<void> {
  const send = (result: ChildResult): Promise<void> => new Promise((resolve) => process.send?.(result, () => resolve()));
  process.on("disconnect", () => process.exit(1));
  const [{ default: pino }, { systemClock }, { createDiskProbe }, { createFolderWatcher }, { watchFoldersWithKernel }, sharedProbe] = await Promise.all([
    import("pino"),
    import("../src/core/clock.ts"),
    import("../src/paths/disk-probe.ts"),
    import("../src/watch/folder-watcher.ts"),
    import("../src/watch/kernel-events.ts"),
    import("../src/paths/shared-disk-probe.ts"),
  ]);
  const log = pino({ level: "silent" });
  // As the service makes it (sharedDiskProbe).
  const probe = createDiskProbe({ log, timeoutMs: sharedProbe.STAT_TIMEOUT_MS });

  // The poll interval's sleep is held until the bench opens it: the second walk starts at a known moment.
  let pollGate: (() => void) | undefined;
  let gateReached: (() => void) | undefined;
  const atGate = new Promise<void>((resolve) => (gateReached = resolve));
  const clock: typeof systemClock = {
    now: () => systemClock.now(),
    sleep: (ms, signal) =>
      ms !== POLL_MS
        ? systemClock.sleep(ms, signal)
        : new Promise<void>((resolve) => {
            pollGate = resolve;
            signal?.addEventListener("abort", () => resolve(), { once: true });
            gateReached?.();
          }),
  };
  const walks: { at: number; cpu: NodeJS.CpuUsage; seconds: number }[] = [];
  let walkWaiter: (() => void) | undefined;
  const reported = new Map<string, number>();
  let reportWaiter: (() => void) | undefined;

  const watcher = createFolderWatcher({
    name: `bench-${mode}`,
    settings: { paths: [tree], mode, pollMs: POLL_MS, minAgeMs: MIN_AGE_S * 1000, wanted: () => true },
    stateFile,
    probe,
    clock,
    log,
    report: (changes) => {
      for (const change of changes) reported.set(change.path, performance.now());
      reportWaiter?.();
      return Promise.resolve();
    },
    ...(mode === "events" ? { watchFolders: watchFoldersWithKernel } : {}),
    walked: (seconds) => {
      walks.push({ at: performance.now(), cpu: process.cpuUsage(), seconds });
      walkWaiter?.();
    },
  });
  const walkNumber = async (n: number): Promise<(typeof walks)[number]> => {
    while (walks.length < n) await new Promise<void>((resolve) => (walkWaiter = resolve));
    return walks[n - 1] as (typeof walks)[number];
  };

  await settleMemory();
  const { rss: rssBefore, heapUsed: heapBefore } = process.memoryUsage();
  const startedAt = performance.now();
  const cpuAtStart = process.cpuUsage();
  watcher.start();
  const first = await walkNumber(1);
  while (watcher.status().state === "starting") {
    if (watcher.status().state === "stopped") break;
    await sleep(10);
  }
  const startupS = (performance.now() - startedAt) / 1000;
  const status = watcher.status();
  if (status.state === "stopped") {
    await send({ mode, rssBefore, rssAfter: rssBefore, heapKept: 0, peakRss: 0, walkS: 0, walkCores: 0, startupS, stateBytes: 0, folders: 0, files: 0, problem: status.problem ?? "stopped" });
    process.exit(0);
  }
  const stateBytes = await stat(stateFile).then((info) => info.size, () => 0);
  await settleMemory();
  const { rss: rssAfter, heapUsed: heapAfter } = process.memoryUsage();
  const result: ChildResult = {
    mode,
    rssBefore,
    rssAfter,
    heapKept: heapAfter - heapBefore,
    peakRss: 0,
    walkS: first.seconds,
    walkCores: cores(cpuAtStart, first.cpu, first.at - startedAt),
    startupS,
    stateBytes,
    folders: status.folders,
    files: status.files,
  };

  if (mode === "events") {
    const noticeS: number[] = [];
    const written: string[] = [];
    for (const show of [7, 503, 998]) {
      const path = join(tree, `Show ${String(show).padStart(4, "0")}`, "Season 07", `Show ${String(show)} - S07E99.mkv`);
      const writtenAt = performance.now();
      writeFileSync(path, "new episode");
      written.push(path);
      const until = writtenAt + 30_000;
      while (!reported.has(path) && performance.now() < until) {
        await Promise.race([new Promise<void>((resolve) => (reportWaiter = resolve)), sleep(1_000)]);
      }
      noticeS.push(reported.has(path) ? ((reported.get(path) as number) - writtenAt) / 1000 - MIN_AGE_S : Number.POSITIVE_INFINITY);
      await sleep(300);
    }
    Object.assign(result, { noticeS });
    await watcher.stop();
    // The tree back as it was, for the poll watcher.
    for (const path of written) unlinkSync(path);
  } else {
    await atGate;
    await sleep(200);
    const gateOpenedAt = performance.now();
    const cpuAtGate = process.cpuUsage();
    pollGate?.();
    const second = await walkNumber(2);
    await settleMemory();
    Object.assign(result, {
      secondWalkS: second.seconds,
      secondWalkCores: cores(cpuAtGate, second.cpu, second.at - gateOpenedAt),
      rssAfterSecond: process.memoryUsage().rss,
    });
  }
  Object.assign(result, { peakRss: peakRss() });
  if (mode === "poll") await watcher.stop();
  await send(result);
  process.exit(0);
}

async function settleMemory(): Promise<void> {
  const gc = (globalThis as { gc?: (o: object) => void }).gc;
  for (let i = 0; i < 3; i++) {
    gc?.({ type: "major", execution: "sync", flavor: "last-resort" });
    await sleep(100);
  }
}

function peakRss(): number {
  const status = existsSync("/proc/self/status") ? readFileSync("/proc/self/status", "utf8") : "";
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
}

function cores(from: NodeJS.CpuUsage, to: NodeJS.CpuUsage, wallMs: number): number {
  return (to.user - from.user + to.system - from.system) / 1000 / Math.max(1, wallMs);
}

// ——— formatting ———

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const pad = (n: number): string => String(n).padStart(2, "0");
const s = (x: number): string => `${x.toFixed(x < 10 ? 2 : 1)} s`;
const seconds = (ms: number): string => s(ms / 1000);
const mb = (bytes: number, digits = 0): string => `${(bytes / 1024 / 1024).toFixed(digits)} MB`;
const over = (value: number, floor: number): string => (value > floor ? "  ← MISSED" : "");

// Last, so that every constant above is set before either side runs.
if (process.argv[2] === "--child") await watcherChild(process.argv[3] as "events" | "poll", process.argv[4] as string, process.argv[5] as string);
else await main();
