import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startFakePlex, type FakePlex } from "./support/fake-plex.ts";
import { freePort } from "./support/free-port.ts";
import { startCli, within, type RunningCli } from "./support/run-cli.ts";

/**
 * The landed check's rescan is a scan like any other: it goes through the dispatcher, so a folder under a missing
 * anchor (SERVER_ANCHORS) is not sent to Plex, whose "empty trash after every scan" would drop the folder's items.
 * The real service against the fake Plex: the file is not visible, its mount's anchor goes missing, the rescan waits;
 * the anchor is back, the rescan goes out once, and the file lands.
 */
const SERVER_PASS = "0123456789abcdef0123456789abcdef";
const cleanups: (() => Promise<void>)[] = [];
const running: RunningCli[] = [];

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

interface TargetJson {
  readonly target: string;
  readonly landed?: string;
  readonly landedReason?: string;
}

describe("the landed check's rescan", () => {
  it("waits while the folder's anchor is missing, goes out once it is back, and the file lands", async () => {
    const dir = await mkdtemp(join(tmpdir(), "autoscan-landed-anchor-"));
    const media = join(dir, "media");
    const anchor = join(media, "TV", ".anchor");
    const season = join(media, "TV", "Held", "Season 01");
    await mkdir(season, { recursive: true });
    await writeFile(anchor, "");
    await writeFile(join(season, "Held - S01E01.mkv"), "x");
    const plex: FakePlex = await startFakePlex({
      sections: [{ key: "2", title: "TV Shows", type: "show", locations: ["/data/TV"] }],
      toLocal: (path) => (path.startsWith("/data/TV") ? join(media, "TV", path.slice("/data/TV".length)) : undefined),
    });
    // Plex takes the first scan and imports nothing (as when it read the folder on a flaky mount).
    plex.library.setNever(true);
    cleanups.push(async () => {
      await plex.close();
      await rm(dir, { recursive: true, force: true });
    });
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
      SERVER_LANDED_RECHECK: 5,
      SERVER_ANCHORS: [anchor],
      SERVER_PATH_MAPPINGS: { "/data/TV/": ["/tv/"] },
      SERVER_FILE_EXIST_PATH_MAPPINGS: { [`${media}/TV/`]: ["/data/TV/"] },
    };
    await writeFile(join(dir, "config.json"), JSON.stringify(config, null, 2));
    const child = startCli(["server", "--config", join(dir, "config.json"), "--logfile", "none"], { timeoutMs: 120_000 });
    running.push(child);
    const api = async (query: string): Promise<unknown> =>
      (await fetch(`http://127.0.0.1:${String(port)}/api/${SERVER_PASS}?${query}`)).json();
    await waitFor(async () => (await fetch(`http://127.0.0.1:${String(port)}/health`).catch(() => undefined))?.ok === true, `health (${child.stderr()})`);

    const folder = "/data/TV/Held/Season 01";
    const scansOfFolder = (): number => plex.scans.filter((scan) => scan.path === folder).length;
    const body = {
      eventType: "Download",
      series: { id: 1, title: "Held", path: "/tv/Held" },
      episodeFile: { id: 1, relativePath: "Season 01/Held - S01E01.mkv", path: "/tv/Held/Season 01/Held - S01E01.mkv" },
    };
    const posted = await fetch(`http://127.0.0.1:${String(port)}/${SERVER_PASS}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
    expect(posted.status).toBe(200);
    await waitFor(() => scansOfFolder() === 1, `the first scan (log: ${child.stdout()})`);

    // The mount goes away: its anchor is missing (seen by the service's anchor watch).
    await rm(anchor);
    await waitFor(() => child.stdout().includes(`Anchor '${anchor}' is missing`), `the anchor missed (log: ${child.stdout()})`);
    await waitFor(() => child.stdout().includes("Still not visible in 'plex'"), `the second look missed (log: ${child.stdout()})`);

    // The rescan waits in the queue for the anchor: nothing is sent to Plex for the folder meanwhile.
    const waitingForAnchor = async (): Promise<boolean> => {
      const queue = (await api("cmd=queue")) as { queue: { waitingForAnchor?: string }[] };
      return queue.queue.some((item) => item.waitingForAnchor === anchor);
    };
    await waitFor(async () => scansOfFolder() > 1 || (await waitingForAnchor()), `the rescan queued (log: ${child.stdout()})`);
    expect(scansOfFolder()).toBe(1);

    // The mount is back: the held rescan goes out once, Plex imports the folder, and the check sees the file.
    plex.library.setNever(false);
    await writeFile(anchor, "");
    await waitFor(() => scansOfFolder() === 2, `the rescan after the anchor came back (log: ${child.stdout()})`);
    const landedTarget = async (): Promise<TargetJson | undefined> => {
      const history = (await api("cmd=history&q=Held")) as { history: { targets: TargetJson[] }[] };
      return history.history.flatMap((item) => item.targets).find((target) => target.landed !== undefined);
    };
    await waitFor(async () => (await landedTarget())?.landed === "landed", `landed (log: ${child.stdout()})`);
    expect(child.stdout()).toMatch(/Anchor '.*\.anchor' is back after \d+ s: 1 held folder\(s\) go out now/);
    expect(scansOfFolder()).toBe(2);
  }, 120_000);
});
