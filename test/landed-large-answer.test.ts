import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startFakePlex } from "./support/fake-plex.ts";
import { freePort } from "./support/free-port.ts";
import { startCli, within, type RunningCli } from "./support/run-cli.ts";

/**
 * A huge library answer: Plex's `file=` listing answers the file's whole folder, and a folder of 6,000 episodes with
 * their metadata is a 15 MB answer. The real service looks the file up in it while /health is asked every 50 ms: the
 * look ends (landed), the service keeps answering, and its memory stays bounded.
 */
const SERVER_PASS = "0123456789abcdef0123456789abcdef";
const running: RunningCli[] = [];
const cleanups: (() => Promise<void>)[] = [];

afterAll(async () => {
  for (const child of running) if (child.process.exitCode === null) child.process.kill("SIGKILL");
  for (const cleanup of cleanups.reverse()) await cleanup();
});

async function waitFor(check: () => boolean | Promise<boolean>, what: string, ms = 60_000): Promise<void> {
  await within(
    (async () => {
      while (!(await check())) await new Promise((resolve) => setTimeout(resolve, 100));
    })(),
    ms,
    what,
  );
}

/** The process's peak resident memory (VmHWM), in MB. */
async function peakRssMb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${String(pid)}/status`, "utf8");
  const kb = Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? Number.NaN);
  return kb / 1024;
}

describe("a 15 MB library answer", () => {
  it("the look completes while /health keeps answering, and memory stays bounded", async () => {
    const dir = await mkdtemp(join(tmpdir(), "autoscan-large-answer-"));
    const media = join(dir, "media");
    await mkdir(join(media, "TV", "Big", "Season 01"), { recursive: true });
    await writeFile(join(media, "TV", "Big", "Season 01", "Big - S01E9999.mkv"), "x");
    const plex = await startFakePlex({
      sections: [{ key: "2", title: "TV Shows", type: "show", locations: ["/data/TV"] }],
      toLocal: (path) => (path.startsWith("/data/TV") ? join(media, "TV", path.slice("/data/TV".length)) : undefined),
    });
    cleanups.push(async () => {
      await plex.close();
      await rm(dir, { recursive: true, force: true });
    });
    // The season already holds 6,000 episodes, each with 2.4 kB of metadata; the new one is listed once scanned.
    const season = "/data/TV/Big/Season 01";
    for (let n = 0; n < 6_000; n++) plex.library.add(`${season}/Big - S01E${String(n).padStart(4, "0")}.mkv`);
    plex.library.add(`${season}/Big - S01E9999.mkv`);
    plex.library.setNever(true);
    plex.setItemMetadataBytes(2_400);

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
      SERVER_PATH_MAPPINGS: { "/data/TV/": ["/tv/"] },
      SERVER_FILE_EXIST_PATH_MAPPINGS: { [`${media}/TV/`]: ["/data/TV/"] },
    };
    await writeFile(join(dir, "config.json"), JSON.stringify(config, null, 2));
    const child = startCli(["server", "--config", join(dir, "config.json"), "--logfile", "none"], { timeoutMs: 120_000 });
    running.push(child);
    const base = `http://127.0.0.1:${String(port)}`;
    await waitFor(async () => (await fetch(`${base}/health`).catch(() => undefined))?.ok === true, `health (${child.stderr()})`);

    const body = {
      eventType: "Download",
      series: { id: 1, title: "Big", path: "/tv/Big" },
      episodeFile: { id: 1, relativePath: "Season 01/Big - S01E9999.mkv", path: "/tv/Big/Season 01/Big - S01E9999.mkv" },
    };
    const posted = await fetch(`${base}/${SERVER_PASS}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
    expect(posted.status).toBe(200);

    // /health every 50 ms until the look has ended, one way or the other.
    let slowest = 0;
    let ended = false;
    const probing = (async () => {
      while (!ended) {
        const started = performance.now();
        await fetch(`${base}/health`);
        slowest = Math.max(slowest, performance.now() - started);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    const outcome = async (): Promise<string | undefined> => {
      const history = (await (await fetch(`${base}/api/${SERVER_PASS}?cmd=history&q=Big`)).json()) as { history: { targets: { landed?: string }[] }[] };
      const landed = history.history[0]?.targets[0]?.landed;
      return landed === "pending" ? undefined : landed;
    };
    await waitFor(async () => (await outcome()) !== undefined, `the look's outcome (log: ${child.stdout()})`);
    ended = true;
    await probing;

    expect(await outcome()).toBe("landed");
    expect(plex.requests.some((request) => request.path === "/library/sections/2/all")).toBe(true);
    // Generous bounds (figures: bench/landed-large-answer.ts): the whole answer parsed at once stalled the service
    // 0.6–1 s per look; read a page at a time, no answer waits more than a few tens of ms.
    expect(slowest).toBeLessThan(500);
    expect(await peakRssMb(child.process.pid ?? 0)).toBeLessThan(300);
  }, 120_000);
});
