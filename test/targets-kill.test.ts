import { afterAll, beforeAll, expect, it } from "vitest";
import { startConsoleService, CONSOLE_PASS, type ConsoleService } from "./support/console-service.ts";
import { startFakeEmby, type FakeEmby } from "./support/fake-emby.ts";
import { startFakeJellyfin, type FakeJellyfin } from "./support/fake-jellyfin.ts";

/**
 * A SIGKILL in the middle of a fan-out (issue 14): Plex and Jellyfin have confirmed every folder, Emby (slow) is
 * answering the first of them when the process dies. After a restart on the same queue file every folder reaches
 * Emby, and no server is sent a folder again whose delivery it had confirmed; only the scan in flight on the killed
 * process may go out once more.
 */
let svc: ConsoleService;
let jellyfin: FakeJellyfin;
let emby: FakeEmby;
const SHOWS = ["Alpha", "Bravo", "Charlie", "Delta", "Echo"];

beforeAll(async () => {
  jellyfin = await startFakeJellyfin({ libraries: [{ name: "Shows", locations: ["/data/TV"] }] });
  emby = await startFakeEmby({ libraries: [{ name: "TV", locations: ["/data/TV"] }] });
  svc = await startConsoleService({
    SERVER_SCAN_DELAY: 0,
    TARGETS: {
      jellyfin: { TYPE: "jellyfin", URL: jellyfin.url, TOKEN: jellyfin.key },
      emby: { TYPE: "emby", URL: emby.url, TOKEN: emby.key },
    },
  });
}, 60_000);

afterAll(async () => {
  await svc?.stop();
  await Promise.all([jellyfin?.close(), emby?.close()]);
});

type Item = { folder: string; state: string; targets: { target: string }[] };

async function list(cmd: "queue" | "history"): Promise<Item[]> {
  const answer = (await (await fetch(`${svc.url}/api/${CONSOLE_PASS}?cmd=${cmd}`)).json()) as Record<string, Item[]>;
  return answer[cmd] ?? [];
}

const folderOf = (show: string) => `/data/TV/${show}/Season 01`;
const plexScans = (folder: string) => svc.plex.scans.filter((scan) => scan.path === folder).length;
const updates = (server: FakeJellyfin | FakeEmby, folder: string) => server.updates.filter((u) => u.path === folder).length;

async function send(show: string): Promise<void> {
  await svc.addFile(`TV/${show}/Season 01/${show} - S01E01.mkv`);
  const res = await svc.webhook("sonarr", {
    eventType: "Download",
    series: { id: 1, title: show, path: `/tv/${show}` },
    episodeFile: { id: 1, relativePath: `Season 01/${show} - S01E01.mkv`, path: `/tv/${show}/Season 01/${show} - S01E01.mkv` },
  });
  expect(res.status).toBe(200);
}

it("loses no delivery and repeats none that was confirmed", async () => {
  // A first folder goes out everywhere (each server's library list is then cached); then Emby becomes slow.
  await send("Warmup");
  await expect.poll(async () => (await list("history")).length, { timeout: 30_000, interval: 200 }).toBe(1);
  const before = emby.requests.filter((r) => /Media\/Updated/i.test(r.path)).length;
  emby.setDelay(60_000);
  for (const show of SHOWS) await send(show);
  // Plex and Jellyfin confirmed (recorded in the queue) every folder; Emby is busy with one of them.
  await expect
    .poll(
      async () => {
        const pending = await list("queue");
        return pending.length === SHOWS.length && pending.every((item) => ["plex", "jellyfin"].every((t) => item.targets.some((x) => x.target === t)));
      },
      { timeout: 30_000, interval: 200 },
    )
    .toBe(true);
  await expect.poll(() => emby.requests.some((r) => /Media\/Updated/i.test(r.path)), { timeout: 30_000 }).toBe(true);
  const inFlight = emby.requests.filter((r) => /Media\/Updated/i.test(r.path)).length - before;

  await svc.kill();
  emby.setDelay(0);
  await svc.restart();

  await expect.poll(async () => (await list("history")).filter((item) => item.state === "done").length, { timeout: 60_000, interval: 500 }).toBe(SHOWS.length + 1);
  for (const show of SHOWS) {
    const folder = folderOf(show);
    expect(plexScans(folder), `Plex, ${show}`).toBe(1);
    expect(updates(jellyfin, folder), `Jellyfin, ${show}`).toBe(1);
    expect(updates(emby, folder), `Emby, ${show}`).toBeGreaterThanOrEqual(1);
  }
  // Emby's updates: one per folder, plus at most the ones that were in flight when the process died (counted).
  const total = SHOWS.reduce((sum, show) => sum + updates(emby, folderOf(show)), 0);
  expect(total).toBeLessThanOrEqual(SHOWS.length + inFlight);
  console.log(`SIGKILL mid fan-out: Emby had ${inFlight} update(s) in flight; after the restart Emby got ${total} for ${SHOWS.length} folders, Plex and Jellyfin 1 each`);
}, 120_000);
