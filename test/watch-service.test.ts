import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { appendFile, chmod, chown, mkdir, mkdtemp, readdir, readFile, rename, rm, symlink, unlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { describeFaults, type Capability } from "./support/faults/describe-faults.ts";
import { cleanupMounts, mountFaultyFuse, mountHungFuse, mountTmpfs, probeFuse, probeMounts, umountLazy } from "./support/faults/mounts.ts";
import pg from "pg";
import { startFakePlex, type FakePlex } from "./support/fake-plex.ts";
import { createTestDatabase, describeWithPostgres, dropTestDatabase, terminateConnections } from "./support/postgres.ts";
import { freePort } from "./support/free-port.ts";
import { startCli, within, type CliOptions, type RunningCli } from "./support/run-cli.ts";

/**
 * WATCH end to end: the real service (`autoscan server` as a child process) watching real folders, against a fake
 * Plex whose section is `/data/TV` (autoscan sees it at `<tmp>/media/TV`, through SERVER_FILE_EXIST_PATH_MAPPINGS).
 * Files are copied, renamed, deleted and moved in bursts for real; what the watchers saw is read where users read
 * it: the scans Plex got, the queue's History (`cmd=history`), the log, `/health` and the console.
 *
 * The tmpfs and the hung FUSE mount need root and the mount syscall: skipped loudly elsewhere, failed under
 * CI=true with AUTOSCAN_REQUIRE_FAULTS=1 (`describeFaults`).
 */
const PASS = "0123456789abcdef0123456789abcdef";
const running: RunningCli[] = [];
const cleanups: (() => Promise<void> | void)[] = [];

afterAll(async () => {
  for (const child of running) if (child.process.exitCode === null && child.process.signalCode === null) child.process.kill("SIGKILL");
  await Promise.all(running.map((child) => child.exited));
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanupMounts();
});

interface Env {
  readonly root: string;
  /** `<root>/media/TV`: Plex's `/data/TV` as autoscan sees it. */
  readonly tv: string;
  readonly plex: FakePlex;
  readonly port: number;
  readonly config: string;
  child?: RunningCli;
}

/** A temp dir with `media/TV` (and the given folders and files in it), a fake Plex and a free port. */
async function prepare(files: readonly string[] = [], folders: readonly string[] = []): Promise<Env> {
  const root = await mkdtemp(join(tmpdir(), "autoscan-watch-"));
  const tv = join(root, "media", "TV");
  await mkdir(tv, { recursive: true });
  for (const folder of folders) await mkdir(join(tv, folder), { recursive: true });
  for (const file of files) await put(join(tv, file));
  const plex = await startFakePlex({
    sections: [{ key: "2", title: "TV Shows", type: "show", locations: ["/data/TV"] }],
    toLocal: (path) => (path.startsWith("/data/TV") ? join(tv, path.slice("/data/TV".length)) : undefined),
  });
  cleanups.push(async () => {
    await plex.close();
    await rm(root, { recursive: true, force: true });
  });
  return { root, tv, plex, port: await freePort(), config: join(root, "config.json") };
}

async function put(path: string, content = "x"): Promise<void> {
  await mkdir(join(path, ".."), { recursive: true });
  await writeFile(path, content);
}

/** Writes the config (WATCH and the rest) and starts `autoscan server`; resolves once /health answers 200. */
async function start(env: Env, watch: Record<string, unknown>, extra: Record<string, unknown> = {}, cli: CliOptions = {}): Promise<RunningCli> {
  const config = {
    SERVER_PASS: PASS,
    SERVER_PORT: env.port,
    SERVER_IP: "127.0.0.1",
    PLEX_LOCAL_URL: env.plex.url,
    PLEX_TOKEN: env.plex.token,
    PLEX_ANALYZE_TYPE: "off",
    SERVER_SCAN_DELAY: 0,
    SERVER_FILE_CHECK_DELAY: 1,
    SERVER_PATH_MAPPINGS: { "/data/TV/": ["/tv/"] },
    SERVER_FILE_EXIST_PATH_MAPPINGS: { [`${env.tv}/`]: ["/data/TV/"] },
    WATCH: watch,
    ...extra,
  };
  await writeFile(env.config, JSON.stringify(config, null, 2));
  if (cli.user) await chownTree(env.root, cli.user);
  const child = startCli(["server", "--config", env.config, "--logfile", "none"], { timeoutMs: 120_000, ...cli });
  running.push(child);
  env.child = child;
  await until(async () => (await health(env))?.status === "ok", () => `health (${child.stdout()}${child.stderr()})`);
  return child;
}

/** Gives a tree to a user (the service run as that user reads it, and keeps its data in it). */
async function chownTree(dir: string, user: { readonly uid: number; readonly gid: number }): Promise<void> {
  await chown(dir, user.uid, user.gid);
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.isSymbolicLink()) continue;
    if (entry.isDirectory()) await chownTree(join(dir, entry.name), user);
    else await chown(join(dir, entry.name), user.uid, user.gid);
  }
}

/** SIGTERM, as systemd or docker stop does; resolves once the service has exited. */
async function stopService(env: Env): Promise<void> {
  const child = env.child;
  if (!child) return;
  child.process.kill("SIGTERM");
  const exit = await within(child.exited, 20_000, `the stop (${child.stdout()})`);
  expect(exit, child.stdout() + child.stderr()).toEqual({ code: 0, signal: null });
}

async function until(check: () => boolean | Promise<boolean>, what: () => string, ms = 25_000): Promise<void> {
  try {
    await within(
      (async () => {
        while (!(await check())) await sleep(100);
      })(),
      ms,
      "waiting",
    );
  } catch {
    throw new Error(`${what()}: nothing after ${String(ms)} ms`);
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const health = (env: Env): Promise<Record<string, unknown> | undefined> =>
  fetch(`http://127.0.0.1:${String(env.port)}/health`, { signal: AbortSignal.timeout(5_000) }).then(
    async (r) => (r.ok ? ((await r.json()) as Record<string, unknown>) : undefined),
    () => undefined,
  );

const log = (env: Env): string => env.child?.stdout() ?? "";

/** Until the watcher's first walk is over (it logs that it watches). */
const watching = (env: Env, name: string): Promise<void> =>
  until(() => log(env).includes(`Watcher '${name}' is watching`), () => `watcher '${name}' watching (${log(env)})`);

const scansOf = (env: Env, folder: string) => env.plex.scans.filter((scan) => scan.path === folder);

interface HistoryRequest {
  readonly path: string;
  readonly source: string;
  readonly event: string;
  readonly deleted?: boolean;
}

interface HistoryItem {
  readonly folder: string;
  readonly requests: HistoryRequest[];
  /** Requests a finished folder let go of (it keeps its first ones). */
  readonly requestsDropped: number;
}

async function historyItems(env: Env, folder: string): Promise<HistoryItem[]> {
  const answer = await fetch(`http://127.0.0.1:${String(env.port)}/api/${PASS}?cmd=history&q=${encodeURIComponent(folder)}`);
  const body = (await answer.json()) as { history: HistoryItem[] };
  return body.history.filter((item) => item.folder === folder);
}

/**
 * A folder's History items once there is one. Plex gets the scan call before the queue records the item as finished,
 * so a test that saw the call waits (briefly) for the History rather than reading it in that gap.
 */
async function finishedItems(env: Env, folder: string): Promise<HistoryItem[]> {
  let items: HistoryItem[] = [];
  await until(
    async () => (items = await historyItems(env, folder)).length > 0,
    () => `'${folder}' in the History (${log(env)})`,
    10_000,
  );
  return items;
}

/** The History's requests for one folder (server form), all items. */
const historyRequests = async (env: Env, folder: string): Promise<HistoryRequest[]> => (await finishedItems(env, folder)).flatMap((item) => item.requests);

/** The one History item of a folder. */
async function historyItem(env: Env, folder: string): Promise<HistoryItem> {
  const items = await finishedItems(env, folder);
  expect(items, folder).toHaveLength(1);
  return items[0] as HistoryItem;
}

const brief = (requests: readonly HistoryRequest[]) =>
  requests.map((r) => ({ path: r.path, source: r.source, event: r.event, deleted: r.deleted === true })).sort((a, b) => a.path.localeCompare(b.path));

describe("WATCH in the running service", () => {
  it.concurrent("a copy in progress is not scanned while it grows; once it has settled for MIN_AGE_SECONDS it is, once", async () => {
    const env = await prepare([], ["Show/Season 01"]);
    await start(env, { tv: { PATHS: [env.tv], MODE: "events", MIN_AGE_SECONDS: 2 } });
    await watching(env, "tv");
    const file = join(env.tv, "Show", "Season 01", "Show - S01E01.mkv");
    // A slow copy: a piece every 400 ms for about 5 s, never 2 s without a change.
    await writeFile(file, "piece 0;");
    for (let piece = 1; piece <= 12; piece++) {
      await sleep(400);
      await appendFile(file, `piece ${String(piece)};`);
      expect(scansOf(env, "/data/TV/Show/Season 01"), log(env)).toEqual([]);
    }
    expect(log(env)).not.toContain("Queued Watch (tv)");
    await until(() => scansOf(env, "/data/TV/Show/Season 01").length > 0, () => `the scan once settled (${log(env)})`);
    expect(await readFile(file, "utf8")).toContain("piece 12;");
    // Settled means reported once: one request, Created, one scan.
    await sleep(3_000);
    expect(scansOf(env, "/data/TV/Show/Season 01")).toHaveLength(1);
    expect(brief(await historyRequests(env, "/data/TV/Show/Season 01"))).toEqual([
      { path: "/data/TV/Show/Season 01/Show - S01E01.mkv", source: "Watch (tv)", event: "Created", deleted: false },
    ]);
    expect(log(env)).toContain("Queued Watch (tv) 'Created': '/data/TV/Show/Season 01/Show - S01E01.mkv'");
  }, 60_000);

  it.concurrent("a rename and a delete become scans of their folders, the delete a `deleted` request", async () => {
    const env = await prepare(["Show/Season 01/Show.S01E01.WEB.mkv", "Show/Season 02/Show - S02E01.mkv", "Show/Season 02/Show - S02E02.mkv"]);
    await start(env, { tv: { PATHS: [env.tv], MODE: "events", MIN_AGE_SECONDS: 2 } });
    await watching(env, "tv");
    await rename(join(env.tv, "Show", "Season 01", "Show.S01E01.WEB.mkv"), join(env.tv, "Show", "Season 01", "Show - S01E01.mkv"));
    await unlink(join(env.tv, "Show", "Season 02", "Show - S02E01.mkv"));
    await until(
      () => scansOf(env, "/data/TV/Show/Season 01").length > 0 && scansOf(env, "/data/TV/Show/Season 02").length > 0,
      () => `both folders scanned (${log(env)})`,
    );
    expect(brief(await historyRequests(env, "/data/TV/Show/Season 01"))).toEqual([
      { path: "/data/TV/Show/Season 01/Show - S01E01.mkv", source: "Watch (tv)", event: "Created", deleted: false },
      { path: "/data/TV/Show/Season 01/Show.S01E01.WEB.mkv", source: "Watch (tv)", event: "Deleted", deleted: true },
    ]);
    expect(brief(await historyRequests(env, "/data/TV/Show/Season 02"))).toEqual([
      { path: "/data/TV/Show/Season 02/Show - S02E01.mkv", source: "Watch (tv)", event: "Deleted", deleted: true },
    ]);
    // The rename is one batch: one scan of its folder, not one for the old name and one for the new.
    expect(scansOf(env, "/data/TV/Show/Season 01")).toHaveLength(1);
    expect(log(env)).toContain("Queued Watch (tv) 'Deleted': '/data/TV/Show/Season 02/Show - S02E01.mkv' (deleted)");
  }, 60_000);

  it.concurrent("the first start records what is there and scans none of it; what comes after is scanned", async () => {
    const env = await prepare(["Old Show/Season 01/Old Show - S01E01.mkv", "Old Show/Season 01/Old Show - S01E02.mkv", "Other/Season 03/Other - S03E01.mkv"]);
    await start(env, { tv: { PATHS: [env.tv], MODE: "events", MIN_AGE_SECONDS: 1 } });
    await watching(env, "tv");
    expect(log(env)).toContain(`Watcher 'tv' starts: recording what is in '${env.tv}' (nothing there now is scanned).`);
    // The watcher is live: a file added now is scanned.
    await put(join(env.tv, "New Show", "Season 01", "New Show - S01E01.mkv"));
    await until(() => scansOf(env, "/data/TV/New Show/Season 01").length > 0, () => `the new file's scan (${log(env)})`);
    await sleep(2_000);
    expect(env.plex.scans.map((scan) => scan.path)).toEqual(["/data/TV/New Show/Season 01"]);
    expect(log(env).match(/Queued Watch \(tv\)/g)).toHaveLength(1);
    // What it recorded is on disk, for the next start.
    expect(await readFile(join(env.root, "watch", "tv.state"), "utf8")).toContain("Old Show - S01E02.mkv");
  }, 60_000);

  it.concurrent("a restart catches what changed while the service was down, and rescans nothing else", async () => {
    const env = await prepare([
      "Show/Season 01/Show - S01E01.mkv",
      "Show/Season 02/Show - S02E01.mkv",
      "Show/Season 02/Show - S02E02.mkv",
      "Quiet/Season 01/Quiet - S01E01.mkv",
    ]);
    const watch = { tv: { PATHS: [env.tv], MODE: "events", MIN_AGE_SECONDS: 2 } };
    await start(env, watch);
    await watching(env, "tv");
    await stopService(env);

    // While it is down: a new file, a file replaced by a bigger one, a deleted file, a new season folder.
    await put(join(env.tv, "Show", "Season 01", "Show - S01E02.mkv"));
    await writeFile(join(env.tv, "Show", "Season 01", "Show - S01E01.mkv"), "a better version");
    await unlink(join(env.tv, "Show", "Season 02", "Show - S02E02.mkv"));
    await put(join(env.tv, "Show", "Season 03", "Show - S03E01.mkv"));

    await start(env, watch);
    await until(
      () => ["Season 01", "Season 02", "Season 03"].every((season) => scansOf(env, `/data/TV/Show/${season}`).length > 0),
      () => `the three folders scanned after the restart (${log(env)})`,
    );
    expect(log(env)).not.toContain("starts: recording");
    expect(brief(await historyRequests(env, "/data/TV/Show/Season 01"))).toEqual([
      { path: "/data/TV/Show/Season 01/Show - S01E01.mkv", source: "Watch (tv)", event: "Modified", deleted: false },
      { path: "/data/TV/Show/Season 01/Show - S01E02.mkv", source: "Watch (tv)", event: "Created", deleted: false },
    ]);
    expect(brief(await historyRequests(env, "/data/TV/Show/Season 02"))).toEqual([
      { path: "/data/TV/Show/Season 02/Show - S02E02.mkv", source: "Watch (tv)", event: "Deleted", deleted: true },
    ]);
    expect(brief(await historyRequests(env, "/data/TV/Show/Season 03"))).toEqual([
      { path: "/data/TV/Show/Season 03/Show - S03E01.mkv", source: "Watch (tv)", event: "Created", deleted: false },
    ]);
    await sleep(1_000);
    expect(scansOf(env, "/data/TV/Quiet/Season 01")).toEqual([]);
    expect(env.plex.scans).toHaveLength(3);
  }, 60_000);

  it.concurrent("a file still settling when the service stops is scanned after the restart", async () => {
    const env = await prepare([], ["Show/Season 01"]);
    // MIN_AGE 60 s: the file cannot settle before the stop.
    await start(env, { tv: { PATHS: [env.tv], MODE: "events", MIN_AGE_SECONDS: 60 } });
    await watching(env, "tv");
    await put(join(env.tv, "Show", "Season 01", "Show - S01E01.mkv"), "copied just before the stop");
    const queuePage = (): Promise<string> => fetch(`http://127.0.0.1:${String(env.port)}/${PASS}/queue`).then((r) => r.text(), () => "");
    // The watcher has seen it: it waits to settle.
    await until(async () => (await queuePage()).includes("1 file settling"), () => `the file settling (${log(env)})`);
    await stopService(env);
    expect(env.plex.scans).toEqual([]);

    await start(env, { tv: { PATHS: [env.tv], MODE: "events", MIN_AGE_SECONDS: 2 } });
    await until(() => scansOf(env, "/data/TV/Show/Season 01").length > 0, () => `the scan after the restart (${log(env)})`);
    expect(brief(await historyRequests(env, "/data/TV/Show/Season 01"))).toEqual([
      { path: "/data/TV/Show/Season 01/Show - S01E01.mkv", source: "Watch (tv)", event: "Created", deleted: false },
    ]);
  }, 60_000);

  it.concurrent("a burst: 200 files moved into 10 season folders at once are at most 10 scans, one per folder", async () => {
    const seasons = Array.from({ length: 10 }, (_, i) => `Season ${String(i + 1).padStart(2, "0")}`);
    const env = await prepare([], seasons.map((season) => `Pack/${season}`));
    // The pack is downloaded beside the library (same disk), then moved in at once, as an *arr-less import does.
    const staging = join(env.root, "downloads");
    for (const season of seasons) {
      for (let e = 1; e <= 20; e++) await put(join(staging, season, `Pack - ${season} E${String(e).padStart(2, "0")}.mkv`), `episode ${String(e)}`);
    }
    await start(env, { tv: { PATHS: [env.tv], MODE: "events", MIN_AGE_SECONDS: 2 } }, { SERVER_SCAN_DELAY: 2 });
    await watching(env, "tv");
    await Promise.all(
      seasons.map(async (season) => {
        for (let e = 1; e <= 20; e++) {
          const name = `Pack - ${season} E${String(e).padStart(2, "0")}.mkv`;
          await rename(join(staging, season, name), join(env.tv, "Pack", season, name));
        }
      }),
    );
    await until(
      () => seasons.every((season) => scansOf(env, `/data/TV/Pack/${season}`).length > 0),
      () => `every season scanned (${String(env.plex.scans.length)} scans so far; ${log(env)})`,
    );
    // Nothing more comes: one scan per folder, every file of the pack requested.
    await sleep(4_000);
    expect(env.plex.scans.length, env.plex.scans.map((s) => s.path).join("\n")).toBeLessThanOrEqual(10);
    expect(new Set(env.plex.scans.map((scan) => scan.path)).size).toBe(10);
    // Each folder's History keeps its first requests and counts the rest: 20 a folder, all of them Created.
    for (const season of seasons) {
      const item = await historyItem(env, `/data/TV/Pack/${season}`);
      expect(item.requests.every((r) => r.event === "Created" && r.source === "Watch (tv)" && r.path.startsWith(`/data/TV/Pack/${season}/`))).toBe(true);
      expect(new Set(item.requests.map((r) => r.path)).size + item.requestsDropped, season).toBe(20);
    }
  }, 60_000);

  it.concurrent("a watched path that maps to no library is refused at start with its key named; the rest starts and works", async () => {
    const env = await prepare([], ["Show/Season 01"]);
    const outside = join(env.root, "elsewhere", "Unmapped");
    await mkdir(outside, { recursive: true });
    await start(env, {
      tv: { PATHS: [env.tv], MODE: "events", MIN_AGE_SECONDS: 1 },
      stray: { PATHS: [join(env.tv, "Show"), outside], MODE: "poll", POLL_SECONDS: 10 },
    });
    await watching(env, "tv");
    const line = log(env)
      .split("\n")
      .find((l) => l.includes("WATCH.stray.PATHS[1]"));
    expect(line, log(env)).toMatch(/ERROR/);
    expect(line).toContain(`'${outside}'`);
    expect(line).toContain("Watcher 'stray' is not started.");
    expect(log(env)).not.toContain("WATCH.stray.PATHS[0]");
    expect(log(env)).not.toContain("WATCH.tv.PATHS");
    expect(await health(env)).toMatchObject({ status: "ok", watchers: [{ name: "stray", state: "stopped" }] });
    // The rest works: the other watcher reports.
    await put(join(env.tv, "Show", "Season 01", "Show - S01E01.mkv"));
    await until(() => scansOf(env, "/data/TV/Show/Season 01").length > 0, () => `the healthy watcher's scan (${log(env)})`);
    expect(log(env)).not.toContain("Watch (stray)");
  }, 60_000);
});

describeFaults("WATCH poll mode on a tmpfs", probeMounts(), { concurrent: true }, () => {
  it("POLL_SECONDS 10: a new file and a new folder are found by the next walk and scanned", async () => {
    const env = await prepare();
    mountTmpfs(env.tv, 16 * 1024 * 1024);
    cleanups.push(() => umountLazy(env.tv));
    await put(join(env.tv, "Show", "Season 01", "Show - S01E01.mkv"));
    await start(env, { tmpfs: { PATHS: [env.tv], MODE: "poll", POLL_SECONDS: 10, MIN_AGE_SECONDS: 1 } });
    await watching(env, "tmpfs");
    expect(log(env)).toContain("a walk every 10 s");
    await put(join(env.tv, "Show", "Season 01", "Show - S01E02.mkv"));
    await put(join(env.tv, "Show", "Season 02", "Show - S02E01.mkv"));
    await until(
      () => scansOf(env, "/data/TV/Show/Season 01").length > 0 && scansOf(env, "/data/TV/Show/Season 02").length > 0,
      () => `both folders scanned after the next walk (${log(env)})`,
    );
    expect(brief(await historyRequests(env, "/data/TV/Show/Season 01"))).toEqual([
      { path: "/data/TV/Show/Season 01/Show - S01E02.mkv", source: "Watch (tmpfs)", event: "Created", deleted: false },
    ]);
    expect(brief(await historyRequests(env, "/data/TV/Show/Season 02"))).toEqual([
      { path: "/data/TV/Show/Season 02/Show - S02E01.mkv", source: "Watch (tmpfs)", event: "Created", deleted: false },
    ]);
  }, 60_000);
});

describeFaults("WATCH on a FUSE mount that hangs", fuseMountable(), { concurrent: true }, () => {
  it("the rest keeps working (a webhook is answered and scanned, another watcher reports) and the watcher says it is waiting", async () => {
    const env = await prepare([], ["Healthy/Season 01"]);
    const hung = await mountHungFuse(join(env.root, "media", "Hung"));
    cleanups.push(() => {
      hung.release();
      umountLazy(hung.dir);
    });
    await start(
      env,
      {
        tv: { PATHS: [env.tv], MODE: "events", MIN_AGE_SECONDS: 1 },
        remote: { PATHS: [hung.dir], MODE: "poll", POLL_SECONDS: 10, MIN_AGE_SECONDS: 1 },
      },
      { SERVER_FILE_EXIST_PATH_MAPPINGS: { [`${hung.dir}/`]: ["/data/TV/Remote/"], [`${env.tv}/`]: ["/data/TV/"] } },
    );
    await watching(env, "tv");
    await until(() => log(env).includes("Watcher 'remote' is waiting"), () => `the hung watcher waiting (${log(env)})`);
    expect(log(env)).toMatch(new RegExp(`WARNING - WATCH .*Watcher 'remote' is waiting: '${hung.dir}' does not answer`));
    expect(await health(env)).toMatchObject({ status: "ok", watchers: [{ name: "remote", state: "waiting", waitingFor: hung.dir }] });

    // A webhook is answered at once and scanned.
    await put(join(env.tv, "Hooked", "Season 01", "Hooked - S01E01.mkv"));
    const answer = await fetch(`http://127.0.0.1:${String(env.port)}/${PASS}`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({
        eventType: "Download",
        series: { id: 1, title: "Hooked", path: "/tv/Hooked" },
        episodeFile: { id: 1, relativePath: "Season 01/Hooked - S01E01.mkv", path: "/tv/Hooked/Season 01/Hooked - S01E01.mkv" },
      }),
      signal: AbortSignal.timeout(5_000),
    });
    expect(answer.status).toBe(200);
    // The healthy watcher still reports.
    await put(join(env.tv, "Healthy", "Season 01", "Healthy - S01E01.mkv"));
    await until(
      () => scansOf(env, "/data/TV/Hooked/Season 01").length > 0 && scansOf(env, "/data/TV/Healthy/Season 01").length > 0,
      () => `the webhook's and the healthy watcher's scans (${log(env)})`,
    );
    expect(brief(await historyRequests(env, "/data/TV/Healthy/Season 01"))).toEqual([
      { path: "/data/TV/Healthy/Season 01/Healthy - S01E01.mkv", source: "Watch (tv)", event: "Created", deleted: false },
    ]);
    // Still waiting, said once.
    expect(await health(env)).toMatchObject({ watchers: [{ name: "remote", state: "waiting" }] });
    expect(log(env).match(/Watcher 'remote' is waiting/g)).toHaveLength(1);
    expect(env.plex.scans.every((scan) => !scan.path.startsWith("/data/TV/Remote"))).toBe(true);
  }, 60_000);
});

describeFaults("WATCH on a FUSE mount that stops answering between a folder's listing and the next look", fuseMountable(), { concurrent: true }, () => {
  it("the walk waits in the disk probe's helper, never on the thread pool: webhooks are answered and SIGTERM stops the service", async () => {
    const env = await prepare();
    const remote = await mountFaultyFuse(join(env.root, "backing"), join(env.root, "media", "Remote"));
    cleanups.push(() => remote.stop());
    await mkdir(join(env.root, "backing", "Show"), { recursive: true });
    await put(join(env.root, "backing", "Movie.mkv"));
    // Once the (empty) folder 'Show' has been listed, what it is (its attributes) never comes back.
    await remote.set("getattr-hang Show");
    await start(
      env,
      { remote: { PATHS: [remote.dir], MODE: "poll", POLL_SECONDS: 10, MIN_AGE_SECONDS: 1 } },
      { SERVER_FILE_EXIST_PATH_MAPPINGS: { [`${remote.dir}/`]: ["/data/TV/Remote/"], [`${env.tv}/`]: ["/data/TV/"] } },
    );
    await until(() => log(env).includes("Watcher 'remote' is waiting"), () => `the watcher waiting for its mount (${log(env)})`, 40_000);
    // A webhook is answered at once and stored.
    await put(join(env.tv, "Hooked", "Season 01", "Hooked - S01E01.mkv"));
    const answer = await fetch(`http://127.0.0.1:${String(env.port)}/${PASS}`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({
        eventType: "Download",
        series: { id: 1, title: "Hooked", path: "/tv/Hooked" },
        episodeFile: { id: 1, relativePath: "Season 01/Hooked - S01E01.mkv", path: "/tv/Hooked/Season 01/Hooked - S01E01.mkv" },
      }),
      signal: AbortSignal.timeout(5_000),
    });
    expect(answer.status).toBe(200);
    await until(() => scansOf(env, "/data/TV/Hooked/Season 01").length > 0, () => `the webhook's scan (${log(env)})`);
    // The look that hangs is in a helper process: nothing of the service's own waits for it at the stop.
    await stopService(env);
  }, 90_000);
});

/** Root, /dev/fuse and a FUSE mount allowed here: tried once for real. */
function fuseMountable(): Capability {
  const fuse = probeFuse();
  if (!fuse.ok) return fuse;
  const dir = mkdtempSync(join(tmpdir(), "autoscan-fuse-probe-"));
  try {
    const script = `exec 3<>/dev/fuse; mount -i -t fuse -o fd=3,rootmode=40000,user_id=0,group_id=0 fuse "$1" && umount -l "$1"`;
    const result = spawnSync("bash", ["-c", script, "fuse-probe", dir], { encoding: "utf8", timeout: 10_000 });
    return result.status === 0 ? { ok: true } : { ok: false, reason: `cannot mount FUSE here: ${result.stderr.trim() || `exit ${String(result.status)}`}` };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describeWithPostgres("WATCH while the queue refuses writes (PostgreSQL read-only)", () => {
  /** The database refuses every write from new sessions on (and its sessions are ended, so the service's new ones do). */
  async function readOnly(url: string, on: boolean): Promise<void> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await client.query("SET default_transaction_read_only = off");
      await client.query(`ALTER DATABASE "${new URL(url).pathname.slice(1)}" SET default_transaction_read_only = ${on ? "on" : "off"}`);
    } finally {
      await client.end();
    }
    await terminateConnections(url);
  }

  it("a change the queue could not store before a stop is not saved as seen: the next start scans it", async () => {
    const database = await createTestDatabase();
    cleanups.push(() => dropTestDatabase(database));
    const env = await prepare([], ["Show/Season 01"]);
    const watch = { tv: { PATHS: [env.tv], MODE: "events", MIN_AGE_SECONDS: 1 } };
    await start(env, watch, { SERVER_DATABASE_URL: database });
    await watching(env, "tv");
    await readOnly(database, true);
    await put(join(env.tv, "Show", "Season 01", "Show - S01E01.mkv"));
    await until(() => log(env).includes("The queue cannot take the watchers' requests now"), () => `the queue refusing (${log(env)})`);
    // The stop: its last try is refused too, and the watcher keeps the change as not seen.
    const first = env.child as RunningCli;
    first.process.kill("SIGTERM");
    await within(first.exited, 30_000, `the stop (${log(env)})`);
    expect(log(env)).toContain("they are kept as not seen, and the next start's walk finds those changes again");
    expect(env.plex.scans).toEqual([]);

    await readOnly(database, false);
    await start(env, watch, { SERVER_DATABASE_URL: database });
    await until(() => scansOf(env, "/data/TV/Show/Season 01").length > 0, () => `the scan after the restart (${log(env)})`);
    expect(brief(await historyRequests(env, "/data/TV/Show/Season 01"))).toEqual([
      { path: "/data/TV/Show/Season 01/Show - S01E01.mkv", source: "Watch (tv)", event: "Created", deleted: false },
    ]);
  }, 90_000);
});

describe("WATCH and symbolic links", () => {
  it.concurrent("links into a loop and to a parent are not followed (said once); a new file is one request, and SIGTERM stops the service", async () => {
    const env = await prepare(["Show/Season 01/Show - S01E01.mkv"], ["Other/Season 01"]);
    const season = join(env.tv, "Show", "Season 01");
    // Two links to their own folder (a walk that follows them never ends), and one to a parent.
    await symlink(".", join(season, "again"));
    await symlink(".", join(season, "and again"));
    await symlink("..", join(env.tv, "Other", "Season 01", "up"));
    await start(env, { tv: { PATHS: [env.tv], MODE: "events", MIN_AGE_SECONDS: 1 } });
    await watching(env, "tv");
    expect(log(env)).toMatch(/Watcher 'tv' is watching 5 folder\(s\)/);
    // A link made while watching is not followed either.
    await symlink(env.root, join(env.tv, "Other", "outside"));
    await put(join(season, "Show - S01E02.mkv"));
    await put(join(env.tv, "Other", "Season 01", "Other - S01E01.mkv"));
    await until(
      () => scansOf(env, "/data/TV/Show/Season 01").length > 0 && scansOf(env, "/data/TV/Other/Season 01").length > 0,
      () => `both scans (${log(env)})`,
    );
    await sleep(2_000);
    expect(env.plex.scans.map((scan) => scan.path).sort()).toEqual(["/data/TV/Other/Season 01", "/data/TV/Show/Season 01"]);
    expect(brief(await historyRequests(env, "/data/TV/Show/Season 01"))).toEqual([
      { path: "/data/TV/Show/Season 01/Show - S01E02.mkv", source: "Watch (tv)", event: "Created", deleted: false },
    ]);
    expect(brief(await historyRequests(env, "/data/TV/Other/Season 01"))).toEqual([
      { path: "/data/TV/Other/Season 01/Other - S01E01.mkv", source: "Watch (tv)", event: "Created", deleted: false },
    ]);
    const skipped = log(env).split("\n").filter((line) => line.includes("symbolic link"));
    expect(skipped.length, log(env)).toBeGreaterThanOrEqual(1);
    expect(skipped.length).toBeLessThanOrEqual(2);
    expect(skipped[0]).toMatch(/WARNING - WATCH/);
    await stopService(env);
  }, 60_000);
});

describe("WATCH and a folder it cannot read (the service as user nobody: as root a chmod denies nothing)", () => {
  const nobody = { uid: 65534, gid: 65534 };
  it.concurrent("EACCES is a warning naming the folder and the error, never a deletion; once readable again it is watched", async () => {
    const env = await prepare(["Show/Season 01/Show - S01E01.mkv", "Show/Season 01/Show - S01E02.mkv"]);
    const season = join(env.tv, "Show", "Season 01");
    await start(env, { tv: { PATHS: [env.tv], MODE: "events", MIN_AGE_SECONDS: 1 } }, {}, { user: nobody });
    await watching(env, "tv");
    await chmod(season, 0o000);
    await until(() => log(env).includes("EACCES"), () => `the warning (${log(env)})`);
    const warning = log(env).split("\n").find((line) => line.includes("EACCES")) ?? "";
    expect(warning).toMatch(/WARNING - WATCH/);
    expect(warning).toContain(`'${season}'`);
    await sleep(3_000);
    expect(env.plex.scans, log(env)).toEqual([]);
    // Readable again: looked at again, nothing in it reported gone, and a new file there is scanned.
    await chmod(season, 0o755);
    await until(() => log(env).includes(`can read '${season}' again`), () => `read again (${log(env)})`);
    await put(join(season, "Show - S01E03.mkv"));
    await chown(join(season, "Show - S01E03.mkv"), nobody.uid, nobody.gid);
    await until(() => scansOf(env, "/data/TV/Show/Season 01").length > 0, () => `the new file's scan (${log(env)})`);
    expect(brief(await historyRequests(env, "/data/TV/Show/Season 01"))).toEqual([
      { path: "/data/TV/Show/Season 01/Show - S01E03.mkv", source: "Watch (tv)", event: "Created", deleted: false },
    ]);
    expect(log(env).match(/EACCES/g)).toHaveLength(1);
  }, 60_000);
});

describe("WATCH in events mode: a root missing at start, or deleted and made again", () => {
  it.concurrent("a root missing at start is watched once it exists (said once), and a new file in it is scanned", async () => {
    const env = await prepare();
    const later = join(env.tv, "Later");
    await start(env, { tv: { PATHS: [later], MODE: "events", MIN_AGE_SECONDS: 1 } });
    await watching(env, "tv");
    expect(log(env)).toContain(`'${later}' does not exist`);
    await mkdir(later);
    await until(() => log(env).includes(`watching '${later}' again`), () => `watching again (${log(env)})`);
    await put(join(later, "Show", "Show - S01E01.mkv"));
    await until(() => scansOf(env, "/data/TV/Later/Show").length > 0, () => `the scan (${log(env)})`);
    expect(log(env).match(/watching '[^']*' again/g)).toHaveLength(1);
  }, 60_000);

  it.concurrent("a root deleted and made again is watched again: a new file in it is scanned", async () => {
    const env = await prepare(["Show/Season 01/Show - S01E01.mkv"]);
    const root = join(env.tv, "Show");
    await start(env, { tv: { PATHS: [root], MODE: "events", MIN_AGE_SECONDS: 1 } });
    await watching(env, "tv");
    await rm(root, { recursive: true });
    await mkdir(root);
    await until(() => log(env).includes(`watching '${root}' again`), () => `watching again (${log(env)})`);
    await put(join(root, "Season 02", "Show - S02E01.mkv"));
    await until(() => scansOf(env, "/data/TV/Show/Season 02").length > 0, () => `the scan (${log(env)})`);
  }, 60_000);
});

describeFaults("WATCH in events mode: a filesystem under the root unmounted and mounted again", probeMounts(), { concurrent: true }, () => {
  it("is watched again after each (said once each): a new file on the new mount is scanned", async () => {
    const env = await prepare([], ["Show"]);
    const mounted = join(env.tv, "Show", "Season 01");
    mountTmpfs(mounted, 4 * 1024 * 1024);
    cleanups.push(() => umountLazy(mounted));
    await put(join(mounted, "Show - S01E01.mkv"));
    await start(env, { tv: { PATHS: [env.tv], MODE: "events", MIN_AGE_SECONDS: 1 } });
    await watching(env, "tv");
    const again = (): number => log(env).split(`watching '${mounted}' again`).length - 1;
    umountLazy(mounted);
    await until(() => again() === 1, () => `watching again after the unmount (${log(env)})`);
    // Mounted again: the kernel says nothing of a mount; the mount table does.
    mountTmpfs(mounted, 4 * 1024 * 1024);
    await until(() => again() === 2, () => `watching again after the mount (${log(env)})`);
    await put(join(mounted, "Show - S01E02.mkv"));
    const requested = async (): Promise<string[]> => (await historyItems(env, "/data/TV/Show/Season 01")).flatMap((item) => item.requests.map((r) => r.path));
    await until(async () => (await requested()).includes("/data/TV/Show/Season 01/Show - S01E02.mkv"), () => `the new file's scan (${log(env)})`);
    expect(scansOf(env, "/data/TV/Show/Season 01").length).toBeGreaterThan(0);
  }, 60_000);
});
