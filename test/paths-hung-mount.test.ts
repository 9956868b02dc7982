import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { mkdir, open, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createDiskProbe } from "../src/paths/disk-probe.ts";
import { checkItemFiles } from "../src/queue/dispatch/file-check.ts";
import { captureLog } from "./support/capture-log.ts";
import { startFakePlex, type FakePlex } from "./support/fake-plex.ts";
import { freePort } from "./support/free-port.ts";
import { startCli, within, type RunningCli } from "./support/run-cli.ts";

/**
 * A mount that never answers, for real: a FUSE mount whose daemon (a `sleep` holding /dev/fuse open) never reads a
 * request. Every stat under it blocks in the kernel, holding one of libuv's threads, until the daemon dies (then
 * ENOTCONN). This is what an unresponsive rclone or NFS mount does to autoscan's file checks.
 *
 * Needs root and /dev/fuse; skipped loudly elsewhere.
 */
const POOL = Number(process.env.UV_THREADPOOL_SIZE ?? 4);
const unavailable = whyNoFuse();

if (unavailable) {
  console.warn(`\n*** SKIPPING the hung-mount tests: ${unavailable} ***\n`);
  it.skip(`file checks on a hung mount (SKIPPED: ${unavailable})`, () => undefined);
} else {
  describeHungMount();
}

interface HungMount {
  readonly dir: string;
  /** Kills the daemon: every stat still blocked returns ENOTCONN. */
  release(): Promise<void>;
  cleanup(): Promise<void>;
}

function whyNoFuse(): string | undefined {
  if (process.platform !== "linux") return "FUSE mounts need Linux";
  if (process.getuid?.() !== 0) return "mounting needs root";
  if (!existsSync("/dev/fuse")) return "no /dev/fuse";
  const dir = mkdtempSync(join(tmpdir(), "autoscan-fuse-probe-"));
  try {
    const script = `exec 3<>/dev/fuse; mount -i -t fuse -o fd=3,rootmode=40000,user_id=0,group_id=0 fuse '${dir}' && umount -l '${dir}'`;
    const result = spawnSync("bash", ["-c", script], { encoding: "utf8", timeout: 10_000 });
    return result.status === 0 ? undefined : `cannot mount FUSE here: ${result.stderr.trim() || `exit ${result.status}`}`;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function mountHung(at?: string): Promise<HungMount> {
  const dir = at ?? mkdtempSync(join(tmpdir(), "autoscan-hung-"));
  const script =
    `exec 3<>/dev/fuse; mount -i -t fuse -o fd=3,rootmode=40000,user_id=0,group_id=0 fuse '${dir}' && echo mounted; ` +
    "exec sleep 600";
  const daemon: ChildProcess = spawn("bash", ["-c", script], { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  daemon.stdout?.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
  daemon.stderr?.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
  const exited = new Promise<void>((resolve) => daemon.once("exit", () => resolve()));
  await within(
    (async () => {
      while (!out.includes("mounted")) await new Promise((resolve) => setTimeout(resolve, 20));
    })(),
    10_000,
    `FUSE mount at ${dir} (${out})`,
  );
  const release = async (): Promise<void> => {
    if (daemon.exitCode === null && daemon.signalCode === null) daemon.kill("SIGKILL");
    await exited;
  };
  return {
    dir,
    release,
    async cleanup() {
      await release();
      spawnSync("umount", ["-l", dir]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A small journal-like write: write, fsync, close (the queue's durable write goes through the same thread pool). */
async function durableWrite(file: string, text: string): Promise<void> {
  const handle = await open(file, "a");
  try {
    await handle.write(text);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

async function timed<T>(work: Promise<T>): Promise<{ value: T; ms: number }> {
  const started = Date.now();
  const value = await work;
  return { value, ms: Date.now() - started };
}

function describeHungMount(): void {
  let mount: HungMount;
  let data: string;
  beforeEach(async () => {
    mount = await mountHung();
    data = mkdtempSync(join(tmpdir(), "autoscan-data-"));
  });
  afterEach(async () => {
    await mount.cleanup();
    rmSync(data, { recursive: true, force: true });
  });

  describe("the mount really hangs", () => {
    it(`a plain fs.stat on it blocks, and ${POOL} of them stop every other fs call of the process`, async () => {
      const raw = Array.from({ length: POOL }, (_, i) => stat(join(mount.dir, `raw-${i}`)).then(() => "answered", (e: NodeJS.ErrnoException) => e.code));
      const write = durableWrite(join(data, "journal"), "x");
      const early = await Promise.race([write.then(() => "written"), new Promise((r) => setTimeout(() => r("blocked"), 1_500))]);
      expect(early).toBe("blocked");
      await mount.release();
      expect(await Promise.all(raw)).toEqual(Array.from({ length: POOL }, () => "ENOTCONN"));
      await within(write, 5_000, "the write once the mount let go of the threads");
    });
  });

  describe("DiskProbe on a hung mount", () => {
    it("answers 'unanswered' in time, keeps its stats in budget, and other fs work goes on promptly", async () => {
      const logs = captureLog();
      // One look at a time under a mount, however many are asked for; it runs in the mount's helper, off the pool.
      const probe = createDiskProbe({ log: logs.log, timeoutMs: 300 });
      const looks = Array.from({ length: 8 }, (_, i) => timed(probe.stat(join(mount.dir, "Show", `e${i}.mkv`))));
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(probe.inFlight()).toBe(1);

      // Meanwhile the rest of the process uses the disk as usual: 20 durable writes, each prompt.
      for (let i = 0; i < 20; i++) {
        const { ms } = await timed(durableWrite(join(data, "journal"), `record ${i}\n`));
        expect(ms).toBeLessThan(500);
      }
      const answers = await Promise.all(looks);
      expect(answers.map((a) => a.value)).toEqual(Array.from({ length: 8 }, () => "unanswered"));
      for (const answer of answers) expect(answer.ms).toBeLessThan(1_500);

      // The stuck stat still holds its helper: counted until it returns, and no second one is started.
      const more = await Promise.all([probe.stat(join(mount.dir, "x")), probe.stat(join(mount.dir, "y"))]);
      expect(more).toEqual(["unanswered", "unanswered"]);
      expect(probe.inFlight()).toBe(1);
      const { ms } = await timed(writeFile(join(data, "other"), "still fine"));
      expect(ms).toBeLessThan(500);

      await mount.release();
      await within(
        (async () => {
          while (probe.inFlight() > 0) await new Promise((resolve) => setTimeout(resolve, 10));
        })(),
        5_000,
        "the stuck stats returning",
      );
    });

    it("more hung mounts than the thread pool has threads: each holds its own helper, the pool and other disks go on", async () => {
      const logs = captureLog();
      const probe = createDiskProbe({ log: logs.log, timeoutMs: 300 });
      const others = [];
      try {
        for (let i = 0; i < POOL; i++) others.push(await mountHung());
        const hungDirs = [mount.dir, ...others.map((m) => m.dir)];
        const looks = hungDirs.flatMap((dir) => [1, 2].map((n) => probe.stat(join(dir, "Show", `e${n}.mkv`))));
        expect(await Promise.all(looks)).toEqual(looks.map(() => "unanswered"));
        // One look in flight per mount, each in its own helper.
        expect(probe.inFlight()).toBe(hungDirs.length);
        await within(
          (async () => {
            while (probe.slowMounts().length < hungDirs.length) await new Promise((resolve) => setTimeout(resolve, 20));
          })(),
          10_000,
          "every hung mount slow",
        );
        expect(new Set(probe.slowMounts())).toEqual(new Set(hungDirs));
        // Five stats stuck in the kernel, none on the pool: a durable write and a look at a healthy disk answer.
        await within(durableWrite(join(data, "journal"), "x"), 2_000, "a durable write beside the hung mounts");
        await writeFile(join(data, "here.mkv"), "x");
        expect(await probe.stat(join(data, "here.mkv"))).toBe("file");
      } finally {
        for (const other of others) await other.cleanup();
      }
      await mount.release();
    });

    it("a helper killed while its look hangs (out of memory, an operator) is 'unanswered', never 'missing'", async () => {
      const probe = createDiskProbe({ log: captureLog().log, timeoutMs: 30_000 });
      const look = probe.stat(join(mount.dir, "Show", "e1.mkv"));
      const helper = await within(
        (async () => {
          for (;;) {
            // This probe's helper is the one blocked in the kernel; others (idle, of other probes) wait in epoll.
            const helpers = spawnSync("pgrep", ["-P", String(process.pid), "-f", "process.send"], { encoding: "utf8" }).stdout.split("\n");
            const stuck = helpers.filter(Boolean).find((pid) => !readFileSync(`/proc/${pid}/wchan`, "utf8").includes("epoll"));
            if (stuck) return Number(stuck);
            await new Promise((resolve) => setTimeout(resolve, 20));
          }
        })(),
        10_000,
        "the mount's helper process",
      );
      process.kill(helper, "SIGKILL");
      expect(await within(look, 5_000, "the look once its helper is gone")).toBe("unanswered");
      expect(probe.inFlight()).toBe(0);
      await mount.release();
    });

    it("a folder whose mount's daemon died is listed as unreadable with its error (ENOTCONN), never as missing", async () => {
      const probe = createDiskProbe({ log: captureLog().log, timeoutMs: 300 });
      await mount.release();
      expect(await within(probe.list(mount.dir), 5_000, "the listing")).toEqual({ unreadable: "ENOTCONN" });
      expect(await within(probe.list(join(mount.dir, "Show")), 5_000, "the listing")).toEqual({ unreadable: "ENOTCONN" });
    });

    it("starts one stat per path at a time: looks at a path whose stat has not returned wait for it, however many", async () => {
      const logs = captureLog();
      const probe = createDiskProbe({ log: logs.log, timeoutMs: 300 });
      const same = join(mount.dir, "Show", "Season 01", "e1.mkv");
      const looks = Array.from({ length: 6 }, () => probe.stat(same));
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(probe.inFlight()).toBe(1);
      expect(await Promise.all(looks)).toEqual(Array.from({ length: 6 }, () => "unanswered"));
      expect(probe.inFlight()).toBe(1);
      await mount.release();
    });

    it("logs one warning naming the mount when it stops answering and one info line when it answers again", async () => {
      const logs = captureLog();
      // Fifteen looks in three rounds: still one warning, not one per stat or per file.
      const probe = createDiskProbe({ log: logs.log, timeoutMs: 200 });
      const elsewhere = join(data, "here.mkv");
      await writeFile(elsewhere, "x");
      for (let round = 0; round < 3; round++) {
        await Promise.all(Array.from({ length: 5 }, (_, i) => probe.stat(join(mount.dir, "Movies", `${round}-${i}.mkv`))));
      }
      expect(probe.unresponsiveMounts()).toEqual([mount.dir]);
      expect(probe.inFlight()).toBe(1);
      const warnings = logs.records.filter((r) => r.level === 40);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatchObject({ component: "DISK", mount: mount.dir });
      expect(warnings[0]?.msg).toContain(`Mount '${mount.dir}' does not answer`);

      await mount.release();
      await within(
        (async () => {
          while (probe.inFlight() > 0) await new Promise((resolve) => setTimeout(resolve, 10));
        })(),
        5_000,
        "the stuck stats returning",
      );
      const infos = logs.records.filter((r) => r.level === 30);
      expect(infos).toHaveLength(1);
      expect(infos[0]?.msg).toMatch(new RegExp(`^Mount '${mount.dir}' answers again \\(with ENOTCONN\\) after \\d+ s\\.$`));
      expect(probe.unresponsiveMounts()).toEqual([]);
      // A file elsewhere is found at once.
      expect(await probe.stat(elsewhere)).toBe("file");
    });

    it("a file check under the hung mount says the disk did not answer (not 'missing'), and one on another disk still completes", async () => {
      const logs = captureLog();
      // One look at a time under any one mount, in that mount's helper: a hung mount holds nothing of the other disks.
      const probe = createDiskProbe({ log: logs.log, timeoutMs: 300 });
      await mkdir(join(data, "tv", "Other"), { recursive: true });
      await writeFile(join(data, "tv", "Other", "e1.mkv"), "x");
      const settings = {
        maxChecks: 10,
        delayMs: 60_000,
        folderOnExhaustion: false,
        // /tv/Show lives on the hung mount; /tv/Other on the data disk.
        localForms: (path: string) => [path.startsWith("/tv/Show") ? join(mount.dir, path) : join(data, path)],
        statPath: probe.stat,
        log: logs.log,
      };
      const request = (path: string) => ({ path, kind: "file" as const, deleted: false, source: "Sonarr", event: "Download" });
      const item = (id: number, folder: string, path: string) =>
        ({ id, rev: 1, folder, files: [], priority: 0, checks: 0, attempts: 0, requests: [request(path)] });

      // Three shows at once on the hung mount: only one stat may hang under it.
      const [hung] = await Promise.all(
        [1, 3, 4].map((n) => timed(checkItemFiles(item(n, `/tv/Show${n}`, `/tv/Show${n}/e1.mkv`), 0, settings))),
      );
      if (!hung) throw new Error("no result");
      expect(hung.value).toEqual({ kind: "unanswered", local: join(mount.dir, "tv/Show1/e1.mkv") });
      expect(hung.ms).toBeLessThan(1_500);
      expect(probe.unresponsiveMounts()).toEqual([mount.dir]);
      expect(await probe.mountOf(join(mount.dir, "tv/Show1/e1.mkv"))).toBe(mount.dir);
      // The hung mount now answers at once, without a stat; the other disk is looked at as usual.
      const again = await timed(checkItemFiles(item(1, "/tv/Show", "/tv/Show/e2.mkv"), 0, settings));
      expect(again.value.kind).toBe("unanswered");
      expect(again.ms).toBeLessThan(100);
      expect(probe.inFlight()).toBe(1);
      const other = await timed(checkItemFiles(item(2, "/tv/Other", "/tv/Other/e1.mkv"), 0, settings));
      expect(other.value).toMatchObject({ kind: "ready", scanFolder: "/tv/Other", files: ["/tv/Other/e1.mkv"] });
      expect(other.ms).toBeLessThan(500);
      await mount.release();
    });
  });

  describe("the service with its media on a hung mount", () => {
    const SERVER_PASS = "0123456789abcdef0123456789abcdef";
    let dir: string;
    let plex: FakePlex;
    let child: RunningCli | undefined;
    beforeEach(async () => {
      dir = mkdtempSync(join(tmpdir(), "autoscan-hung-service-"));
      mkdirSync(join(dir, "media", "TV", "Healthy", "Season 01"), { recursive: true });
      await writeFile(join(dir, "media", "TV", "Healthy", "Season 01", "Healthy - S01E01.mkv"), "x");
      plex = await startFakePlex({ sections: [{ key: "2", title: "TV Shows", type: "show", locations: ["/data/TV"] }] });
    });
    afterEach(async () => {
      child?.process.kill("SIGKILL");
      if (child) await child.exited;
      await plex.close();
      await rm(dir, { recursive: true, force: true });
    });

    it("keeps answering webhooks promptly with 200 while file checks hang, and still scans a folder on a healthy disk", async () => {
      const { port, running } = await serve({
        SERVER_MAX_FILE_CHECKS: 100,
        // Sonarr and Plex see /data/TV/; autoscan finds "Hung…" shows on the hung mount, the rest on a healthy disk.
        SERVER_FILE_EXIST_PATH_MAPPINGS: {
          [`${mount.dir}/`]: ["/data/TV/Hung/"],
          [`${dir}/media/TV/`]: ["/data/TV/"],
        },
      });
      const webhook = (show: string, episode: number): Promise<{ value: number; ms: number }> => timed(sonarr(port, show, episode));

      // Twelve shows on the hung mount, over more than 10 s of checks that never get an answer.
      const statuses: { value: number; ms: number }[] = [];
      for (let round = 0; round < 12; round++) {
        statuses.push(...(await Promise.all([webhook(`Hung/Show ${round}`, 1), webhook(`Hung/Show ${round}`, 2)])));
        await new Promise((resolve) => setTimeout(resolve, 1_000));
      }
      expect(statuses.map((s) => s.value)).toEqual(statuses.map(() => 200));
      expect(Math.max(...statuses.map((s) => s.ms))).toBeLessThan(2_000);

      // A show on the healthy disk is still checked and scanned.
      expect((await webhook("Healthy", 1)).value).toBe(200);
      await within(
        (async () => {
          while (!plex.scans.some((s) => s.path === "/data/TV/Healthy/Season 01")) await new Promise((r) => setTimeout(r, 50));
        })(),
        30_000,
        `the healthy folder's scan (log: ${running.stdout()})`,
      );
      expect(plex.scans.every((s) => !s.path.includes("/Hung/"))).toBe(true);

      const log = running.stdout();
      expect(log.split("\n").filter((line) => line.includes(`Mount '${mount.dir}' does not answer`))).toHaveLength(1);
      // Each file's look is a DEBUG line; at INFO the mount's one warning above says it.
      expect(log).not.toContain("could not be looked at");

      await mount.release();
      await within(
        (async () => {
          while (!running.stdout().includes(`Mount '${mount.dir}' answers again`)) await new Promise((r) => setTimeout(r, 50));
        })(),
        15_000,
        `the mount answering again (log: ${running.stdout()})`,
      );
    }, 90_000);

    /** `autoscan server` with its media under `exist` mappings; resolves once /health answers. */
    async function serve(extra: Record<string, unknown>): Promise<{ port: number; running: RunningCli }> {
      const port = await freePort();
      const config = {
        SERVER_PASS,
        SERVER_PORT: port,
        SERVER_IP: "127.0.0.1",
        PLEX_LOCAL_URL: plex.url,
        PLEX_TOKEN: plex.token,
        PLEX_ANALYZE_TYPE: "off",
        SERVER_SCAN_DELAY: 0,
        SERVER_FILE_CHECK_DELAY: 1,
        ...extra,
      };
      await writeFile(join(dir, "config.json"), JSON.stringify(config, null, 2));
      child = startCli(["server", "--config", join(dir, "config.json"), "--logfile", "none"], { timeoutMs: 120_000 });
      const running = child;
      await until(async () => fetch(`http://127.0.0.1:${port}/health`).then((r) => r.ok, () => false), 30_000, () => `server health (${running.stdout()})`);
      return { port, running };
    }
    const until = async (check: () => Promise<boolean> | boolean, ms: number, what: () => string): Promise<void> => {
      await within(
        (async () => {
          while (!(await check())) await new Promise((resolve) => setTimeout(resolve, 50));
        })(),
        ms,
        what(),
      );
    };
    const sonarr = (port: number, show: string, episode: number): Promise<number> =>
      fetch(`http://127.0.0.1:${port}/${SERVER_PASS}`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({
          eventType: "Download",
          series: { id: 1, title: show, path: `/data/TV/${show}`, tvdbId: 1 },
          episodes: [{ id: episode, episodeNumber: episode, seasonNumber: 1, title: "x" }],
          episodeFile: { id: episode, relativePath: `Season 01/${show.split("/").at(-1) ?? show} - S01E0${episode}.mkv` },
          isUpgrade: false,
        }),
        signal: AbortSignal.timeout(5_000),
      }).then((response) => response.status, () => 0);
    const api = async (port: number, cmd: string): Promise<Record<string, unknown>> =>
      (await (await fetch(`http://127.0.0.1:${port}/api/${SERVER_PASS}?cmd=${cmd}`)).json()) as Record<string, unknown>;

    it("a folder whose disk does not answer waits for its mount: no check spent, never failed, shown; checked and scanned once it answers", async () => {
      const { port, running } = await serve({
        SERVER_MAX_FILE_CHECKS: 2,
        SERVER_FILE_EXIST_PATH_MAPPINGS: { [`${mount.dir}/`]: ["/data/TV/Hung/"], [`${dir}/media/TV/`]: ["/data/TV/"] },
      });
      expect(await sonarr(port, "Hung/Show", 1)).toBe(200);
      // Two checks a second apart would have failed it long before this: the stat's 5 s, then 2 × 1 s.
      await new Promise((resolve) => setTimeout(resolve, 10_000));
      const queue = (await api(port, "queue")).queue as { folder: string; fileChecks: number; waitingForMount?: string }[];
      expect(queue, running.stdout()).toHaveLength(1);
      expect(queue[0]).toMatchObject({ folder: "/data/TV/Hung/Show/Season 01", fileChecks: 0, waitingForMount: mount.dir });
      expect((await api(port, "history")).history).toEqual([]);
      const health = (await (await fetch(`http://127.0.0.1:${port}/health`)).json()) as Record<string, unknown>;
      expect(health).toMatchObject({ status: "ok", disks: { notAnswering: [mount.dir], foldersWaiting: 1 } });
      const log = running.stdout();
      expect(log).toContain(`Folders under mount '${mount.dir}' wait for it to answer`);
      expect(log).not.toContain("Not found after");

      // The mount comes back (here: the hung one goes, and the files are in the folder it covered).
      await mount.release();
      spawnSync("umount", ["-l", mount.dir]);
      await mkdir(join(mount.dir, "Show", "Season 01"), { recursive: true });
      await writeFile(join(mount.dir, "Show", "Season 01", "Show - S01E01.mkv"), "x");
      await until(() => plex.scans.some((s) => s.path === "/data/TV/Hung/Show/Season 01"), 20_000, () => `the scan once the mount answers (${running.stdout()})`);
      expect(running.stdout()).toMatch(new RegExp(`Mount '${mount.dir}' answers again: 1 folder\\(s\\) that waited for it are checked now\\.`));
    }, 60_000);

    it("answers manual requests for paths on the hung mount at once: stored first, the disk asked later", async () => {
      const { port, running } = await serve({
        SERVER_SCAN_DELAY: 60,
        SERVER_FILE_EXIST_PATH_MAPPINGS: { [`${mount.dir}/`]: ["/data/TV/Hung/"], [`${dir}/media/TV/`]: ["/data/TV/"] },
      });
      const manual = (path: string): Promise<{ value: number; ms: number }> =>
        timed(
          fetch(`http://127.0.0.1:${port}/${SERVER_PASS}`, {
            method: "POST",
            headers: { "content-type": "application/x-www-form-urlencoded" },
            body: new URLSearchParams({ eventType: "Manual", filepath: path }).toString(),
            signal: AbortSignal.timeout(10_000),
          }).then((response) => response.status, () => 0),
        );
      const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => manual(`/data/TV/Hung/Show ${String(i)}/Season 01/e1.mkv`)));
      expect(answers.map((a) => a.value), running.stdout()).toEqual(answers.map(() => 200));
      // A stat on the hung mount takes 5 s to give up: no answer waited for one (before, each took 5 s).
      expect(Math.max(...answers.map((a) => a.ms))).toBeLessThan(4_000);
      expect(((await api(port, "queue")).queue as unknown[]).length).toBe(8);
    }, 60_000);

    it("a mount that appeared after the start is named when it hangs, never '/': a folder on a healthy disk is scanned", async () => {
      const { port, running } = await serve({
        SERVER_MAX_FILE_CHECKS: 3,
        SERVER_FILE_EXIST_PATH_MAPPINGS: { [`${dir}/late/`]: ["/data/TV/Late/"], [`${dir}/media/TV/`]: ["/data/TV/"] },
      });
      // A first folder on the healthy disk: the mount table is read now, before the late mount exists.
      expect(await sonarr(port, "Healthy", 1)).toBe(200);
      await until(() => plex.scans.some((s) => s.path === "/data/TV/Healthy/Season 01"), 20_000, () => `the first scan (${running.stdout()})`);
      await mkdir(join(dir, "late"), { recursive: true });
      const late = await mountHung(join(dir, "late"));
      try {
        expect(await sonarr(port, "Late/Show", 1)).toBe(200);
        await new Promise((resolve) => setTimeout(resolve, 6_000));
        await mkdir(join(dir, "media", "TV", "Healthy", "Season 02"), { recursive: true });
        await writeFile(join(dir, "media", "TV", "Healthy", "Season 02", "Healthy - S02E01.mkv"), "x");
        const second = await fetch(`http://127.0.0.1:${port}/${SERVER_PASS}`, {
          method: "POST",
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify({
            eventType: "Download",
            series: { id: 1, title: "Healthy", path: "/data/TV/Healthy", tvdbId: 1 },
            episodes: [{ id: 9, episodeNumber: 1, seasonNumber: 2, title: "x" }],
            episodeFile: { id: 9, relativePath: "Season 02/Healthy - S02E01.mkv" },
            isUpgrade: false,
          }),
        });
        expect(second.status).toBe(200);
        await until(() => plex.scans.some((s) => s.path === "/data/TV/Healthy/Season 02"), 20_000, () => `the healthy folder's scan (${running.stdout()})`);
        const log = running.stdout();
        expect(log).toContain(`Mount '${join(dir, "late")}' does not answer`);
        expect(log).not.toMatch(/Mount '\/' does not answer/);
      } finally {
        await late.cleanup();
      }
    }, 60_000);
  });
}
