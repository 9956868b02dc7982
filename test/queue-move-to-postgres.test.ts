import { access } from "node:fs/promises";
import { join } from "node:path";
import { expect, it } from "vitest";
import { MOVED_SUFFIX, moveQueueFileInto } from "../src/cli/wiring/move-queue.ts";
import { createPgScanQueue } from "../src/queue/postgres/pg-scan-queue.ts";
import { createScanQueue } from "../src/queue/sqljs/sqljs-adapter.ts";
import { captureLog, makeTempDir } from "./support/capture-log.ts";
import { createManualClock } from "./support/manual-clock.ts";
import { writePlexAutoscanQueue } from "./support/plex-autoscan-queue.ts";
import { createTestDatabase, describeWithPostgres, dropTestDatabase } from "./support/postgres.ts";

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
        { path: "/tv/A/Season 01/a2.mkv", kind: "file", source: "Sonarr", event: "Download" },
        { path: "/movies/B", kind: "folder", source: "Manual", event: "Manual", deleted: true },
      ]);
      await old.close();

      const queue = await createPgScanQueue({ url, instance: "a", leaseMs: 15_000, clock, timeFromClock: true, log: logs.log, scanDelayMs: 60_000 });
      try {
        expect(await moveQueueFileInto(queue, file, clock, logs.log)).toBe(2);
        const pending = await queue.listPending();
        expect(pending.map((item) => [item.folder, item.requests.map((r) => [r.path, r.deleted, r.receivedPath])])).toEqual([
          ["/tv/A/Season 01", [["/tv/A/Season 01/a1.mkv", false, "/data/tv/A/Season 01/a1.mkv"], ["/tv/A/Season 01/a2.mkv", false, undefined]]],
          ["/movies/B", [["/movies/B", true, undefined]]],
        ]);
        await expect(access(file)).rejects.toThrow();
        await access(file + MOVED_SUFFIX);
        // The next start finds no file: nothing is queued twice.
        expect(await moveQueueFileInto(queue, file, clock, logs.log)).toBe(0);
        expect(await queue.pendingCount()).toBe(2);
        expect(logs.records.some((r) => String(r.msg).startsWith("Moved 2 waiting folder(s)"))).toBe(true);
      } finally {
        await queue.close();
      }
    } finally {
      await dropTestDatabase(url);
      await temp.cleanup();
    }
  });

  it("imports plex_autoscan's queue found where the queue file goes straight into PostgreSQL, and sets it aside", async () => {
    const temp = await makeTempDir();
    const url = await createTestDatabase();
    const clock = createManualClock();
    const logs = captureLog();
    const file = join(temp.dir, "queue.db");
    writePlexAutoscanQueue(file, ["/tv/A/Season 01/a1.mkv", "/tv/A/Season 01/a2.mkv", "/movies/B"]);
    try {
      const queue = await createPgScanQueue({ url, instance: "a", leaseMs: 15_000, clock, timeFromClock: true, log: logs.log, scanDelayMs: 60_000 });
      try {
        expect(await moveQueueFileInto(queue, file, clock, logs.log)).toBe(3);
        expect((await queue.listPending()).flatMap((item) => item.requests.map((r) => [r.path, r.kind])).sort()).toEqual([
          ["/movies/B", "unknown"],
          ["/tv/A/Season 01/a1.mkv", "unknown"],
          ["/tv/A/Season 01/a2.mkv", "unknown"],
        ]);
        await expect(access(file)).rejects.toThrow();
        await access(`${file}.plex_autoscan.bak`);
        expect(await moveQueueFileInto(queue, file, clock, logs.log)).toBe(0);
        expect(logs.records.some((r) => String(r.msg).startsWith("Imported 3 scan request(s) from the plex_autoscan queue"))).toBe(true);
      } finally {
        await queue.close();
      }
    } finally {
      await dropTestDatabase(url);
      await temp.cleanup();
    }
  });
});
