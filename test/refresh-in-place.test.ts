import { rename } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CONSOLE_PASS, startConsoleService, type ConsoleService } from "./support/console-service.ts";
import { within } from "./support/run-cli.ts";
import { consoleToken } from "../src/web/console/csrf.ts";

/**
 * Refresh in place, end to end: the real service (one child process for the file) with a real queue, a Sonarr upgrade
 * that keeps the file's name, a Sonarr rename, and a fake Plex whose scan stays busy for a while after it answered
 * (Plex scans in the background) and that records every item refresh with whether a scan was still running when it
 * came (refresh-fastpath-targets.md §4). What a user reads: the History JSON's target row.
 */
let svc: ConsoleService;

beforeAll(async () => {
  svc = await startConsoleService({ SERVER_SCAN_DELAY: 0, SERVER_LANDED_RECHECK: 5, SERVER_METRICS: true }, { plexReadsDisk: true });
}, 60_000);

afterAll(async () => {
  await svc.stop();
});

interface TargetJson {
  readonly target: string;
  readonly landed?: string;
  readonly refresh?: string;
  readonly refreshDetail?: string;
}
interface ItemJson {
  readonly id: number;
  readonly refresh?: string;
  readonly requests: { readonly event: string }[];
  readonly targets: TargetJson[];
}

async function history(q: string): Promise<ItemJson[]> {
  const answer = await fetch(`${svc.url}/api/${CONSOLE_PASS}?cmd=history&q=${encodeURIComponent(q)}`);
  return ((await answer.json()) as { history: ItemJson[] }).history;
}

async function waitFor<T>(read: () => Promise<T | undefined>, what: string, ms = 45_000): Promise<T> {
  return within(
    (async () => {
      for (;;) {
        const value = await read();
        if (value !== undefined) return value;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })(),
    ms,
    what,
  );
}

const season = "Season 01";
const episode = (show: string, n: number): string => `${show} - S01E0${String(n)}.mkv`;

function download(show: string, n: number, upgrade = false): unknown {
  const path = `/tv/${show}/${season}/${episode(show, n)}`;
  return {
    eventType: "Download",
    series: { id: 1, title: show, path: `/tv/${show}` },
    episodeFile: { id: 10 + n, relativePath: `${season}/${episode(show, n)}`, path },
    ...(upgrade ? { isUpgrade: true, deletedFiles: [{ id: n, relativePath: `${season}/${episode(show, n)}`, path }] } : {}),
  };
}

/** The first item whose requests include `event` and whose Plex row has an outcome for `field`. */
const settled = (show: string, event: string, field: "landed" | "refresh") => async (): Promise<{ item: ItemJson; plex: TargetJson } | undefined> => {
  for (const item of await history(show)) {
    const plex = item.targets.find((t) => t.target === "plex");
    if (item.requests.some((r) => r.event === event) && plex?.[field] !== undefined && plex[field] !== "pending") return { item, plex };
  }
  return undefined;
};

describe("refresh in place", () => {
  it("an upgrade that keeps the file's name: one scan, then one refresh of that item only, after Plex's scan ended", async () => {
    const show = "Kept Name";
    await svc.addFile(`TV/${show}/${season}/${episode(show, 1)}`);
    await svc.addFile(`TV/${show}/${season}/${episode(show, 2)}`);
    expect((await svc.webhook("sonarr", download(show, 1))).status).toBe(200);
    expect((await svc.webhook("sonarr", download(show, 2))).status).toBe(200);
    await waitFor(settled(show, "Download", "landed"), "the first import landed");
    const first = await history(show);
    // Both imports merged into the season's folder, one scan, both files seen.
    expect(first.map((item) => item.targets.find((t) => t.target === "plex")?.landed)).toEqual(["landed"]);
    // A plain import asks no refresh: nothing is re-read.
    expect(first.every((item) => item.targets.every((t) => t.refresh === undefined))).toBe(true);
    expect(svc.plex.refreshed).toEqual([]);

    const before = svc.plex.requests.length;
    // Plex lists its scan as running for the next status reads after the scan request: a refresh sent then is too early.
    svc.plex.setScanBusyReads(2);
    expect((await svc.webhook("sonarr", download(show, 1, true))).status).toBe(200);
    const { item, plex } = await waitFor(settled(show, "Upgrade", "refresh"), "the upgrade's refresh");

    const file = `/data/TV/${show}/${season}/${episode(show, 1)}`;
    expect(item.refresh, JSON.stringify(item)).toBe("file");
    expect(plex, JSON.stringify(item)).toMatchObject({ landed: "landed" });
    expect(plex).toMatchObject({ landed: "landed", refresh: "refreshed" });
    expect(plex.refreshDetail).toMatch(/metadata refreshed and streams analyzed \(item \d+\)/);
    expect(svc.plex.refreshed).toEqual([{ ratingKey: expect.any(String), file, duringScan: false }]);
    const key = svc.plex.refreshed[0]?.ratingKey ?? "";
    expect(svc.plex.analyzed).toEqual([key]);
    // On Plex, exactly these writes for the upgrade: one partial scan of the folder, one refresh and one analyze of the item.
    const writes = svc.plex.requests
      .slice(before)
      .filter((r) => r.method === "PUT" || r.path.endsWith("/refresh"))
      .map((r) => `${r.method} ${r.path}${r.method === "GET" ? `?path=${r.query.get("path") ?? ""}` : ""}`);
    expect(writes).toEqual([
      `GET /library/sections/2/refresh?path=/data/TV/${show}/${season}`,
      `PUT /library/metadata/${key}/refresh`,
      `PUT /library/metadata/${key}/analyze`,
    ]);

    const metrics = await (await fetch(`${svc.base}/metrics`)).text();
    expect(metrics).toMatch(/autoscan_refresh_total\{target="plex",outcome="refreshed"\} 1/);
  }, 90_000);

  it("a Sonarr rename: one scan of the season folder, then one metadata refresh of the renamed file's item only, after Plex's scan ended", async () => {
    const show = "Renamed";
    const oldName = `${show.toLowerCase()}.s01e01.mkv`;
    // Plex holds the episode under its old name, and its neighbour.
    for (const name of [oldName, episode(show, 2)]) {
      await svc.addFile(`TV/${show}/${season}/${name}`);
      svc.plex.library.add(`/data/TV/${show}/${season}/${name}`);
    }

    // Sonarr renames the file on disk, then sends its Rename event (new and previous paths per file).
    await rename(join(svc.media, "TV", show, season, oldName), join(svc.media, "TV", show, season, episode(show, 1)));
    const before = svc.plex.requests.length;
    const refreshedBefore = svc.plex.refreshed.length;
    svc.plex.setScanBusyReads(2);
    const renamed = await svc.webhook("sonarr", {
      eventType: "Rename",
      series: { id: 2, title: show, path: `/tv/${show}` },
      renamedEpisodeFiles: [
        {
          id: 21,
          relativePath: `${season}/${episode(show, 1)}`,
          path: `/tv/${show}/${season}/${episode(show, 1)}`,
          previousRelativePath: `${season}/${oldName}`,
          previousPath: `/tv/${show}/${season}/${oldName}`,
        },
      ],
    });
    expect(renamed.status).toBe(200);
    const { item, plex } = await waitFor(settled(show, "Rename", "refresh"), "the rename's refresh");
    // The old name is gone from Plex's library, the new one is there: the rename's one scan did both.
    expect(svc.plex.library.files().filter((f) => f.includes(`/${show}/`))).toEqual([`/data/TV/${show}/${season}/${episode(show, 1)}`, `/data/TV/${show}/${season}/${episode(show, 2)}`]);

    const file = `/data/TV/${show}/${season}/${episode(show, 1)}`;
    expect(item.refresh, JSON.stringify(item)).toBe("metadata");
    expect(plex, JSON.stringify(item)).toMatchObject({ landed: "landed", refresh: "refreshed", refreshDetail: expect.stringMatching(/^metadata refreshed \(item \d+\)$/) });
    // The renamed file's item only (not its neighbour), once Plex's scan had ended; a rename re-reads no streams.
    expect(svc.plex.refreshed.slice(refreshedBefore)).toEqual([{ ratingKey: expect.any(String), file, duringScan: false }]);
    const key = svc.plex.refreshed[refreshedBefore]?.ratingKey ?? "";
    expect(svc.plex.analyzed).not.toContain(key);
    const writes = svc.plex.requests
      .slice(before)
      .filter((r) => r.method === "PUT" || r.path.endsWith("/refresh"))
      .map((r) => `${r.method} ${r.path}${r.method === "GET" ? `?path=${r.query.get("path") ?? ""}` : ""}`);
    expect(writes).toEqual([`GET /library/sections/2/refresh?path=/data/TV/${show}/${season}`, `PUT /library/metadata/${key}/refresh`]);
  }, 90_000);

  it("`/triggers/manual?path=<file>&refresh=1` (Bazarr's and Tdarr's hooks): that file's item is refreshed after its scan", async () => {
    const show = "Subtitled";
    await svc.addFile(`TV/${show}/${season}/${episode(show, 1)}`);
    await svc.addFile(`TV/${show}/${season}/${episode(show, 2)}`);
    const before = svc.plex.refreshed.length;
    const asked = await fetch(`${svc.base}/triggers/manual?path=${encodeURIComponent(`/tv/${show}/${season}/${episode(show, 1)}`)}&refresh=metadata`, { method: "POST" });
    expect(asked.status).toBe(200);
    expect(await asked.json()).toMatchObject({ success: true, queued: [{ path: `/data/TV/${show}/${season}/${episode(show, 1)}`, refresh: "metadata" }] });
    const { plex } = await waitFor(settled(show, "Manual", "refresh"), "the manual refresh");
    expect(plex).toMatchObject({ landed: "landed", refresh: "refreshed", refreshDetail: expect.stringMatching(/^metadata refreshed \(item \d+\)$/) });
    // Only the file named: its neighbour in the same folder is not re-read, and metadata only means no analysis.
    expect(svc.plex.refreshed.slice(before)).toEqual([{ ratingKey: expect.any(String), file: `/data/TV/${show}/${season}/${episode(show, 1)}`, duringScan: false }]);
    expect(svc.plex.analyzed).not.toContain(svc.plex.refreshed[before]?.ratingKey);
  }, 90_000);

  it("a `refresh` value it does not know is refused with what it accepts, and nothing is queued", async () => {
    const asked = await fetch(`${svc.base}/triggers/manual?path=/tv/Nope/x.mkv&refresh=please`, { method: "POST" });
    expect(asked.status).toBe(400);
    expect(await asked.text()).toContain("'refresh' must be 1 (re-read the file: metadata and streams), metadata, or 0; got 'please'");
    expect(await history("Nope")).toEqual([]);
  });

  it("Refresh on a History item (the console's button, the API) scans its files again and refreshes their items", async () => {
    const show = "Tdarr Transcoded";
    await svc.addFile(`TV/${show}/${season}/${episode(show, 1)}`);
    expect((await svc.webhook("sonarr", download(show, 1))).status).toBe(200);
    const { item } = await waitFor(settled(show, "Download", "landed"), "the import landed");
    const before = svc.plex.refreshed.length;
    const page = await (await fetch(`${svc.base}/history?q=${encodeURIComponent(show)}`)).text();
    expect(page).toContain(`action="/${CONSOLE_PASS}/items/${String(item.id)}/refresh"`);
    const clicked = await fetch(`${svc.base}/items/${String(item.id)}/refresh`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json", origin: svc.url },
      body: new URLSearchParams({ token: consoleToken(CONSOLE_PASS) }).toString(),
    });
    expect(await clicked.json()).toMatchObject({ ok: true, title: "Refresh queued" });
    const { plex } = await waitFor(settled(show, "Refresh", "refresh"), "the console's refresh");
    expect(plex).toMatchObject({ refresh: "refreshed" });
    expect(svc.plex.refreshed.slice(before).map((r) => r.file)).toEqual([`/data/TV/${show}/${season}/${episode(show, 1)}`]);

    const api = await fetch(`${svc.url}/api/${CONSOLE_PASS}?cmd=refresh&id=${String(item.id)}`);
    expect(await api.json()).toEqual({ success: true, files: 1 });
    const none = await fetch(`${svc.url}/api/${CONSOLE_PASS}?cmd=refresh&id=999999`);
    expect(await none.json()).toEqual({ success: false, msg: "No queue item with id 999999" });
  }, 90_000);
});
