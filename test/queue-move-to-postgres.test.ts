import { access } from "node:fs/promises";
import { join } from "node:path";
import { expect, it } from "vitest";
import { MOVED_SUFFIX } from "../src/queue/move-to-postgres.ts";
import { createPgScanQueue, createScanQueue, type PgScanQueueOptions } from "../src/queue/open-scan-queue.ts";
import type { ScanQueue } from "../src/queue/scan-queue.ts";
import { captureLog, makeTempDir } from "./support/capture-log.ts";
import { createManualClock } from "./support/manual-clock.ts";
import { writePlexAutoscanQueue } from "./support/plex-autoscan-queue.ts";
import { createTestDatabase, describeWithPostgres, dropTestDatabase } from "./support/postgres.ts";

/** The instance's start on PostgreSQL, with its queue file at `file`; the import beside it waited for. */
async function start(options: Omit<PgScanQueueOptions, "instance" | "leaseMs" | "timeFromClock" | "scanDelayMs">): Promise<ScanQueue> {
  const queue = await createPgScanQueue({ ...options, instance: "a", leaseMs: 15_000, timeFromClock: true, scanDelayMs: 60_000 });
  for (let i = 0; i < 500 && queue.importing?.() !== undefined; i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(queue.importing?.()).toBeUndefined();
  return queue;
}

describeWithPostgres("switching an instance from its queue file to PostgreSQL", () => {
  it("queues the file's waiting folders again in PostgreSQL, once, and keeps the file renamed", async () => {
    const temp = await makeTempDir();
    const url = await createTestDatabase();
    const clock = createManualClock();
    const logs = captureLog();
    const file = join(temp.dir, "queue.db");
    try {
      const old = await createScanQueue({ file, clock, log: logs.log, scanDelayMs: 60_000 });
      await old.enqueue([
        { path: "/tv/A/Season 01/a1.mkv", kind: "file", source: "Sonarr", event: "Download", receivedPath: "/data/tv/A/Season 01/a1.mkv" },
        { path: "/tv/A/Season 01/a2.mkv", kind: "file", source: "Sonarr", event: "Upgrade", refresh: "file" },
        { path: "/movies/B", kind: "folder", source: "Manual", event: "Manual", deleted: true },
      ]);
      await old.close();

      const queue = await start({ url, clock, log: logs.log, queueFile: file });
      try {
        const pending = await queue.listPending();
        expect(pending.map((item) => [item.folder, item.requests.map((r) => [r.path, r.deleted, r.receivedPath])])).toEqual([
          ["/tv/A/Season 01", [["/tv/A/Season 01/a1.mkv", false, "/data/tv/A/Season 01/a1.mkv"], ["/tv/A/Season 01/a2.mkv", false, undefined]]],
          ["/movies/B", [["/movies/B", true, undefined]]],
        ]);
        // A folder's refresh in place moves with it.
        expect(pending.map((item) => item.refresh)).toEqual(["file", undefined]);
        await expect(access(file)).rejects.toThrow();
        await access(file + MOVED_SUFFIX);
        expect(logs.records.some((r) => String(r.msg).startsWith("Moved 2 waiting folder(s)"))).toBe(true);
      } finally {
        await queue.close();
      }
      // The next start finds no file: nothing is queued twice.
      const again = await start({ url, clock, log: logs.log, queueFile: file });
      expect(await again.pendingCount()).toBe(2);
      await again.close();
    } finally {
      await dropTestDatabase(url);
      await temp.cleanup();
    }
  });

  it("imports plex_autoscan's queue found where the queue file goes into PostgreSQL, and sets it aside", async () => {
    const temp = await makeTempDir();
    const url = await createTestDatabase();
    const clock = createManualClock();
    const logs = captureLog();
    const file = join(temp.dir, "queue.db");
    writePlexAutoscanQueue(file, ["/tv/A/Season 01/a1.mkv", "/tv/A/Season 01/a2.mkv", "/movies/B"]);
    try {
      const queue = await start({ url, clock, log: logs.log, queueFile: file });
      try {
        expect((await queue.listPending()).flatMap((item) => item.requests.map((r) => [r.path, r.kind])).sort()).toEqual([
          ["/movies/B", "unknown"],
          ["/tv/A/Season 01/a1.mkv", "unknown"],
          ["/tv/A/Season 01/a2.mkv", "unknown"],
        ]);
        await expect(access(file)).rejects.toThrow();
        await access(`${file}.plex_autoscan.bak`);
        expect(logs.records.some((r) => String(r.msg).startsWith("Imported 3 scan request(s) from the plex_autoscan queue"))).toBe(true);
      } finally {
        await queue.close();
      }
      const again = await start({ url, clock, log: logs.log, queueFile: file });
      expect(await again.pendingCount()).toBe(3);
      await again.close();
    } finally {
      await dropTestDatabase(url);
      await temp.cleanup();
    }
  });
});
