import { mkdirSync, mkdtempSync } from "node:fs";
import { rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { describeFaults } from "./support/faults/describe-faults.ts";
import { mountHungFuse, probeFuse, umountLazy, type HungMount } from "./support/faults/mounts.ts";
import { startFakePlex, type FakePlex } from "./support/fake-plex.ts";
import { freePort } from "./support/free-port.ts";
import { startCli, type RunningCli } from "./support/run-cli.ts";

/**
 * The case: the music lives on a FUSE mount that never answers (an rclone mount whose remote hangs), eight
 * manual posts for files on it are queued, then Sonarr reports an episode on a healthy disk. The hung mount may hold
 * its own folders, and nothing else: the episode reaches Plex promptly, long before the hang ends, and SIGTERM stops
 * the service promptly although looks at the hung mount never return.
 */
const SERVER_PASS = "0123456789abcdef0123456789abcdef";

describeFaults("a hung mount with a backlog", probeFuse(), {}, () => {
  let dir: string;
  let hung: HungMount;
  let plex: FakePlex;
  let child: RunningCli | undefined;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), "autoscan-hung-backlog-"));
    mkdirSync(join(dir, "tv", "Healthy", "Season 01"), { recursive: true });
    await writeFile(join(dir, "tv", "Healthy", "Season 01", "Healthy - S01E01.mkv"), "x");
    hung = await mountHungFuse(join(dir, "music"));
    plex = await startFakePlex({
      sections: [
        { key: "1", title: "Music", type: "artist", locations: ["/data/Music"] },
        { key: "2", title: "TV Shows", type: "show", locations: ["/data/TV"] },
      ],
    });
  });
  afterEach(async () => {
    child?.process.kill("SIGKILL");
    if (child) await child.exited;
    child = undefined;
    hung.release();
    umountLazy(hung.dir);
    await plex.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("8 folders waiting on the hung mount hold nothing else: the healthy folder reaches Plex promptly, SIGTERM stops promptly", async () => {
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
      SERVER_MAX_FILE_CHECKS: 5,
      SERVER_FILE_EXIST_PATH_MAPPINGS: { [`${hung.dir}/`]: ["/data/Music/"], [`${dir}/tv/`]: ["/data/TV/"] },
    };
    await writeFile(join(dir, "config.json"), JSON.stringify(config, null, 2));
    const running = startCli(["server", "--config", join(dir, "config.json"), "--logfile", "none"], { timeoutMs: 120_000 });
    child = running;
    const base = `http://127.0.0.1:${String(port)}`;
    await until(() => fetch(`${base}/health`).then((r) => r.ok, () => false), 30_000, () => `server health (${running.stdout()})`);

    const post = (body: Record<string, unknown> | URLSearchParams): Promise<number> =>
      fetch(`${base}/${SERVER_PASS}`, {
        method: "POST",
        ...(body instanceof URLSearchParams
          ? { headers: { "content-type": "application/x-www-form-urlencoded" }, body: body.toString() }
          : { headers: { "content-type": "application/json" }, body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(10_000),
      }).then((r) => r.status, () => 0);

    const manual = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        post(new URLSearchParams({ eventType: "Manual", filepath: `/data/Music/Artist ${String(i)}/Album/01 - Track.flac` })),
      ),
    );
    expect(manual, running.stdout()).toEqual(manual.map(() => 200));
    const sonarr = await post({
      eventType: "Download",
      series: { id: 1, title: "Healthy", path: "/data/TV/Healthy", tvdbId: 1 },
      episodes: [{ id: 1, episodeNumber: 1, seasonNumber: 1, title: "x" }],
      episodeFile: { id: 1, relativePath: "Season 01/Healthy - S01E01.mkv" },
      isUpgrade: false,
    });
    expect(sonarr).toBe(200);

    // The mount never answers in this test: the healthy folder must not wait for it. 15 s is generous (the mount is
    // declared hung 5 s in; a healthy check takes milliseconds), and far shorter than "until the hang ends".
    await until(
      () => plex.scans.some((s) => s.path === "/data/TV/Healthy/Season 01") && running.stdout().includes("Finished scan of '/data/TV/Healthy"),
      15_000,
      () => `the healthy folder's scan (log: ${running.stdout()})`,
    );
    // Before the mount was even declared hung (its first look gets 5 s): the folders behind that look waited without
    // one, and held no check slot meanwhile.
    const log = running.stdout();
    const scanned = log.indexOf("Scan requested for '/data/TV/Healthy/Season 01'");
    const declared = log.indexOf(`Mount '${hung.dir}' does not answer`);
    expect(scanned, log).toBeGreaterThan(0);
    if (declared >= 0) expect(scanned, log).toBeLessThan(declared);
    const queue = (await (await fetch(`${base}/api/${SERVER_PASS}?cmd=queue`)).json()) as { queue: unknown[] };
    expect(queue.queue).toHaveLength(8);
    const history = (await (await fetch(`${base}/api/${SERVER_PASS}?cmd=history`)).json()) as { history: { state?: string }[] };
    expect(history.history.filter((h) => h.state === "failed")).toEqual([]);
    expect(plex.scans.every((s) => !s.path.startsWith("/data/Music"))).toBe(true);

    // Shutting down: nothing stuck on the hung mount holds the service (each look at it is not a task to wait for).
    running.process.kill("SIGTERM");
    const exit = await Promise.race([running.exited, new Promise((resolve) => setTimeout(() => resolve("still running"), 10_000))]);
    expect(exit, running.stdout()).toEqual({ code: 0, signal: null });
    expect(running.stdout()).not.toMatch(/Waiting up to \d+ seconds for \d+ scan task/);
  }, 90_000);
});

/** Waits for `check`, failing after `ms` with `what()` (read then, so a log in it is the log at that moment). */
async function until(check: () => Promise<boolean> | boolean, ms: number, what: () => string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what()}: nothing after ${String(ms)} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
