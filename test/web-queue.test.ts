import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { queueAdminFromScanQueue, queueHealth } from "../src/web/from-config.ts";
import { systemClock } from "../src/core/clock.ts";
import { createPathMapper } from "../src/paths/mapping.ts";
import { type ScanQueue } from "../src/queue/scan-queue.ts";
import { createScanQueue } from "../src/queue/open-scan-queue.ts";
import { createApp } from "../src/web/app.ts";
import { startWebServer, type WebServer } from "../src/web/server.ts";
import { TEST_MAPPINGS, TEST_PASS } from "./support/web-builders.ts";

/**
 * The web app in front of the real queue (sql.js, a real file in a temp dir), over real HTTP: a 200 means the request
 * is in the file, so it survives closing and reopening the queue; a queue that cannot store answers 503.
 */
const log = pino({ level: "silent" });
const dirs: string[] = [];
const open: { queue?: ScanQueue; server?: WebServer }[] = [];

afterEach(async () => {
  for (const entry of open.splice(0)) {
    await entry.server?.close();
    await entry.queue?.close().catch(() => undefined);
  }
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function start(file: string) {
  const queue = await createScanQueue({ file, clock: systemClock, log, scanDelayMs: 600_000 });
  const app = createApp({
    sink: queue.enqueue,
    mapper: createPathMapper({ mappings: TEST_MAPPINGS }),
    queue: queueAdminFromScanQueue(queue),
    health: () => queueHealth(queue),
    log,
    serverPass: TEST_PASS,
    allowManualScan: true,
    ignoreList: [],
  });
  const server = await startWebServer({ app, hostname: "127.0.0.1", port: 0 });
  const entry = { queue, server };
  open.push(entry);
  return entry;
}

function tempQueueFile(): string {
  const dir = mkdtempSync(join(tmpdir(), "autoscan-web-queue-"));
  dirs.push(dir);
  return join(dir, "queue.db");
}

const download = (episode: number) => ({
  eventType: "Download",
  series: { id: 1, title: "Show", path: "/tv/Show" },
  episodeFile: { id: episode, relativePath: `Season 01/Show - S01E0${episode}.mkv` },
  isUpgrade: false,
});
const post = (url: string, body: unknown) =>
  fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

describe("web app + real queue file", () => {
  it("stores what it answered 200 to: merged by folder, visible in the API, still there after a reopen", async () => {
    const file = tempQueueFile();
    const first = await start(file);
    expect((await post(`${first.server.url}/${TEST_PASS}`, download(1))).status).toBe(200);
    expect((await post(`${first.server.url}/${TEST_PASS}/anime`, download(2))).status).toBe(200);
    const manual = await fetch(`${first.server.url}/${TEST_PASS}`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "eventType=Manual&filepath=%2Fmnt%2Funionfs%2FMovies%2FHeat%20(1995)",
    });
    expect(await manual.text()).toBe("'/data/Movies/Heat (1995)' was added to scan queue.");

    const api = async (query: string) => (await fetch(`${first.server.url}/api/${TEST_PASS}?${query}`)).json();
    expect(await api("cmd=queue_count")).toEqual({ success: true, queue_count: 2 });
    const listed = (await api("cmd=queue")) as { queue: { id: number; folder: string; requests: { source: string }[] }[] };
    const show = listed.queue.find((item) => item.folder === "/data/TV/Show/Season 01");
    expect(show?.requests.map((r) => r.source).sort()).toEqual(["Sonarr", "Sonarr (anime)"]);
    expect((await fetch(`${first.server.url}/health`)).status).toBe(200);

    await first.server.close();
    await first.queue.close();
    open.splice(0);
    const second = await start(file);
    expect(await second.queue.pendingCount()).toBe(2);
    const again = async (query: string) => (await fetch(`${second.server.url}/api/${TEST_PASS}?${query}`)).json();
    expect(await again(`cmd=delete&id=${String(show?.id)}`)).toEqual({ success: true });
    expect(await again("cmd=delete&id=not-a-number")).toEqual({ success: false, msg: "No queue item with id not-a-number" });
    expect(await again("cmd=queue_count")).toEqual({ success: true, queue_count: 1 });
  });

  it("answers 503 and queues nothing when the queue cannot store the request", async () => {
    const { queue, server } = await start(tempQueueFile());
    await queue.close();
    const res = await post(`${server.url}/${TEST_PASS}`, download(3));
    expect(res.status).toBe(503);
    expect(await res.text()).toContain("Nothing was queued");
    expect((await fetch(`${server.url}/health`)).status).toBe(503);
  });
});
