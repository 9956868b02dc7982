import { mkdir, mkdtemp, rm, unlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startFakeNotifyReceiver, type FakeNotifyReceiver } from "./support/fake-notify-receiver.ts";
import { startFakePlex, type FakePlex } from "./support/fake-plex.ts";
import { freePort } from "./support/free-port.ts";
import { startCli, within, type RunningCli } from "./support/run-cli.ts";

/**
 * Did it land? The real service (`autoscan server` as a child process) against a fake Plex whose library fills from
 * the disk after each scan, as Plex's scanner does: a file seen at the first look, one seen only at the recheck, one
 * never seen (a rescan, then `not visible`, a WARNING and a notification), a deleted file confirmed gone. The outcome
 * is read where users read it: `cmd=history` JSON, the History page's filter, the metrics.
 */
const SERVER_PASS = "0123456789abcdef0123456789abcdef";
const cleanups: (() => Promise<void>)[] = [];
const running: RunningCli[] = [];

afterAll(async () => {
  for (const child of running) if (child.process.exitCode === null) child.process.kill("SIGKILL");
  for (const cleanup of cleanups.reverse()) await cleanup();
});

interface Setup {
  readonly dir: string;
  readonly media: string;
  readonly plex: FakePlex;
  readonly port: number;
  readonly child: RunningCli;
  readonly receiver: FakeNotifyReceiver;
}

async function setup(plexSetup: (plex: FakePlex) => void): Promise<Setup> {
  const dir = await mkdtemp(join(tmpdir(), "autoscan-landed-"));
  const media = join(dir, "media");
  await mkdir(join(media, "TV"), { recursive: true });
  const plex = await startFakePlex({
    sections: [{ key: "2", title: "TV Shows", type: "show", locations: ["/data/TV"] }],
    toLocal: (path) => (path.startsWith("/data/TV") ? join(media, "TV", path.slice("/data/TV".length)) : undefined),
  });
  plexSetup(plex);
  const receiver = await startFakeNotifyReceiver();
  cleanups.push(async () => {
    await Promise.all([plex.close(), receiver.close()]);
    await rm(dir, { recursive: true, force: true });
  });
  const port = await freePort();
  const config = {
    SERVER_PASS,
    SERVER_PORT: port,
    SERVER_IP: "127.0.0.1",
    SERVER_METRICS: true,
    PLEX_LOCAL_URL: plex.url,
    PLEX_TOKEN: plex.token,
    PLEX_ANALYZE_TYPE: "off",
    SERVER_SCAN_DELAY: 0,
    SERVER_FILE_CHECK_DELAY: 1,
    SERVER_LANDED_RECHECK: 6,
    SERVER_PATH_MAPPINGS: { "/data/TV/": ["/tv/"] },
    SERVER_FILE_EXIST_PATH_MAPPINGS: { [`${media}/TV/`]: ["/data/TV/"] },
    NOTIFY: { hook: { TYPE: "webhook", URL: `${receiver.url}/hook`, EVENTS: ["not_visible"], BATCH_SECONDS: 0 } },
  };
  await writeFile(join(dir, "config.json"), JSON.stringify(config, null, 2));
  const child = startCli(["server", "--config", join(dir, "config.json"), "--logfile", "none"], { timeoutMs: 120_000 });
  running.push(child);
  await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/health`).catch(() => undefined))?.ok === true, `health (stderr: ${child.stderr()})`);
  return { dir, media, plex, port, child, receiver };
}

async function waitFor(check: () => boolean | Promise<boolean>, what: string, ms = 30_000): Promise<void> {
  await within(
    (async () => {
      while (!(await check())) await new Promise((resolve) => setTimeout(resolve, 100));
    })(),
    ms,
    what,
  );
}

const episode = (show: string): string => `/tv/${show}/Season 01/${show} - S01E01.mkv`;

async function putOnDisk(s: Setup, show: string): Promise<void> {
  const local = join(s.media, "TV", show, "Season 01", `${show} - S01E01.mkv`);
  await mkdir(dirname(local), { recursive: true });
  await writeFile(local, "x");
}

const post = (s: Setup, body: unknown): Promise<Response> =>
  fetch(`http://127.0.0.1:${String(s.port)}/${SERVER_PASS}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });

function download(show: string): unknown {
  return {
    eventType: "Download",
    series: { id: 1, title: show, path: `/tv/${show}` },
    episodeFile: { id: 1, relativePath: `Season 01/${show} - S01E01.mkv`, path: episode(show) },
  };
}

function fileDelete(show: string): unknown {
  return {
    eventType: "EpisodeFileDelete",
    deleteReason: "manual",
    series: { id: 1, title: show, path: `/tv/${show}` },
    episodeFile: { id: 1, relativePath: `Season 01/${show} - S01E01.mkv`, path: episode(show) },
  };
}

interface TargetJson {
  readonly target: string;
  readonly landed?: string;
  readonly landedAfterMs?: number;
  readonly landedReason?: string;
}

async function historyTarget(s: Setup, show: string): Promise<TargetJson | undefined> {
  const answer = await fetch(`http://127.0.0.1:${String(s.port)}/api/${SERVER_PASS}?cmd=history&q=${encodeURIComponent(show)}`);
  const body = (await answer.json()) as { history: { targets: TargetJson[] }[] };
  // The newest delivery with a landed state: a landed check's own rescan is a folder of its own, with none.
  return body.history.flatMap((item) => item.targets).find((target) => target.landed !== undefined);
}

describe("the landed check in the running service", () => {
  it.concurrent("landed at once, landed late (at the recheck, no rescan), and a deleted file confirmed gone", async () => {
    const s = await setup(() => undefined);
    await putOnDisk(s, "Quick");
    expect((await post(s, download("Quick"))).status).toBe(200);
    await waitFor(async () => (await historyTarget(s, "Quick"))?.landed === "landed", `Quick landed (log: ${s.child.stdout()})`);
    expect((await historyTarget(s, "Quick"))?.landedAfterMs).toBeGreaterThan(0);
    expect(s.child.stdout()).toMatch(/INFO - LANDED .*Landed: 'plex' shows 1 file\(s\) of '\/data\/TV\/Quick\/Season 01'/);

    // Plex imports 8 s after the scan: not at the first look (5 s), found at the recheck 6 s later.
    s.plex.library.setImportDelay(8_000);
    await putOnDisk(s, "Slow");
    expect((await post(s, download("Slow"))).status).toBe(200);
    await waitFor(async () => (await historyTarget(s, "Slow"))?.landedReason?.includes("Slow - S01E01.mkv") === true, "the first look missed it");
    await waitFor(async () => (await historyTarget(s, "Slow"))?.landed === "landed", `Slow landed (log: ${s.child.stdout()})`);
    expect(s.plex.scans.filter((scan) => scan.path.includes("Slow"))).toHaveLength(1);

    // A deleted episode: Plex listed it; the file is gone from disk; the scan drops it and the check confirms it.
    s.plex.library.setImportDelay(0);
    await putOnDisk(s, "Gone");
    s.plex.library.add("/data/TV/Gone/Season 01/Gone - S01E01.mkv");
    await unlink(join(s.media, "TV", "Gone", "Season 01", "Gone - S01E01.mkv"));
    expect((await post(s, fileDelete("Gone"))).status).toBe(200);
    await waitFor(async () => (await historyTarget(s, "Gone"))?.landed === "landed", `the delete confirmed (log: ${s.child.stdout()})`);
    expect(s.plex.library.has("/data/TV/Gone/Season 01/Gone - S01E01.mkv")).toBe(false);
    expect(s.receiver.messages).toHaveLength(0);
  }, 90_000);

  it.concurrent("never visible: one rescan, then 'not visible' with the file, a WARNING, a notification, the History filter and the metrics", async () => {
    const s = await setup((plex) => plex.library.setNever(true));
    await putOnDisk(s, "Refused");
    expect((await post(s, download("Refused"))).status).toBe(200);
    await waitFor(async () => (await historyTarget(s, "Refused"))?.landed === "not_visible", `not visible (log: ${s.child.stdout()})`, 60_000);
    expect(s.plex.scans.filter((scan) => scan.path === "/data/TV/Refused/Season 01")).toHaveLength(2);
    expect((await historyTarget(s, "Refused"))?.landedReason).toBe("'/data/TV/Refused/Season 01/Refused - S01E01.mkv' not visible in 'plex' after a rescan");
    expect(s.child.stdout()).toMatch(/WARNING - LANDED .*Not visible: '\/data\/TV\/Refused\/Season 01\/Refused - S01E01\.mkv' not visible in 'plex' after a rescan/);
    await waitFor(() => s.receiver.messages.length > 0, "the notification");
    const doc = s.receiver.messages[0]?.json as { event: string; items: { folder: string; target: string }[] };
    expect(doc).toMatchObject({ event: "not_visible", items: [{ folder: "/data/TV/Refused/Season 01", target: "plex" }] });

    const page = await (await fetch(`http://127.0.0.1:${String(s.port)}/${SERVER_PASS}/history?landed=not_visible`)).text();
    expect(page).toContain("1 folder match");
    expect(page).toContain('<span class="badge err">not visible</span>');
    const filtered = (await (await fetch(`http://127.0.0.1:${String(s.port)}/api/${SERVER_PASS}?cmd=history&landed=landed`)).json()) as { total: number };
    expect(filtered.total).toBe(0);
    const metrics = await (await fetch(`http://127.0.0.1:${String(s.port)}/${SERVER_PASS}/metrics`)).text();
    expect(metrics).toMatch(/autoscan_landed_total\{target="plex",outcome="not_visible"\} 1/);
  }, 90_000);
});
