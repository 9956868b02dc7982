import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { pgTx } from "../src/queue/postgres/pg-tx.ts";
import { createPgScanQueue } from "../src/queue/open-scan-queue.ts";
import { openPgPool } from "../src/queue/postgres/pool.ts";
import { inTransaction } from "../src/queue/postgres/transaction.ts";
import type { QueueTx } from "../src/queue/rules/queue-tx.ts";
import { openQueueStore, sqlJsTx } from "../src/queue/sqljs/sqljs-adapter.ts";
import type { ItemRow } from "../src/queue/store-rows.ts";
import { captureLog, makeTempDir } from "./support/capture-log.ts";
import { createManualClock } from "./support/manual-clock.ts";
import { createTestDatabase, describeWithPostgres, dropTestDatabase } from "./support/postgres.ts";

/**
 * A write whose row breaks a unique key (a second waiting item for a folder) fails the same way on both engines: the
 * write rejects, nothing of it is stored, and the row it conflicted with stays as it was. (The embedded store used to
 * replace the other row without a word.)
 */
interface Engine {
  write(work: (tx: QueueTx) => Promise<unknown>): Promise<unknown>;
  /** The waiting items, and how many requests each holds. */
  pending(): Promise<{ folder: string; priority: number; requests: number }[]>;
  close(): Promise<void>;
}

const NOW = 1_700_000_000_000;
const PENDING_SQL = `SELECT folder, priority, (SELECT COUNT(*) FROM requests r WHERE r.item_id = items.id) AS requests
  FROM items WHERE state = 'pending' ORDER BY id`;

const waiting = (folder: string, priority: number): Omit<ItemRow, "id"> => ({
  folder, state: "pending", priority, first_at: NOW, last_at: NOW, due_at: NOW, next_at: 0, rev: 1, checks: 0,
  scan_folder: null, files: null, attempts: 0, unfinished: 0, first_failed_at: null, last_error: null, finished_at: null,
  requests_dropped: 0,
});

const request = (itemId: number) => ({
  item_id: itemId, path: "/tv/Show/Season 01/E01.mkv", kind: "file", deleted: 0, source: "Sonarr", event: "Download",
  received_path: null, at: NOW,
}) as const;

function behaves(open: () => Promise<Engine>): void {
  let engine: Engine;
  beforeEach(async () => {
    engine = await open();
  });
  afterEach(() => engine.close());

  it("refuses a second waiting item for a folder, storing nothing of the write", async () => {
    await engine.write((tx) => tx.insertItem(waiting("/tv/Show/Season 01", 0)));
    const conflicting = engine.write(async (tx) => {
      await tx.addRequest(request(1));
      await tx.insertItem(waiting("/tv/Show/Season 01", 5));
    });
    await expect(conflicting).rejects.toThrow(/UNIQUE constraint failed: items\.folder|duplicate key value violates unique constraint "items_pending_folder"/);
    expect(await engine.pending()).toEqual([{ folder: "/tv/Show/Season 01", priority: 0, requests: 0 }]);
  });

  it("refuses an item image moved onto a folder another waiting item holds", async () => {
    await engine.write(async (tx) => {
      await tx.insertItem(waiting("/tv/A", 0));
      await tx.insertItem(waiting("/tv/B", 1));
    });
    const moved = engine.write(async (tx) => {
      const item = await tx.pendingItem("/tv/B");
      if (item) await tx.updateItem({ ...item, folder: "/tv/A" });
    });
    await expect(moved).rejects.toThrow();
    expect((await engine.pending()).map((item) => item.folder)).toEqual(["/tv/A", "/tv/B"]);
  });
}

describe("a unique-key conflict (sql.js)", () => {
  behaves(async () => {
    const temp = await makeTempDir("autoscan-unique-");
    const store = await openQueueStore({ file: join(temp.dir, "queue.db"), log: captureLog().log, now: () => NOW });
    return {
      write: (work) => store.write((tx) => work(sqlJsTx(tx, NOW))),
      pending: () => store.read((rows) => rows.all(PENDING_SQL)),
      async close() {
        await store.close();
        await temp.cleanup();
      },
    };
  });
});

describeWithPostgres("a unique-key conflict (postgresql)", () => {
  behaves(async () => {
    const url = await createTestDatabase();
    const log = captureLog().log;
    // The schema, as the queue makes it.
    await (await createPgScanQueue({ url, instance: "setup", leaseMs: 15_000, clock: createManualClock(), timeFromClock: true, log, scanDelayMs: 0 })).close();
    const pool = openPgPool({ url, log, applicationName: "unique-key test" });
    return {
      write: (work) => inTransaction(pool, (client) => work(pgTx(client, NOW, "test"))),
      pending: async () => (await pool.query<{ folder: string; priority: number; requests: number }>(PENDING_SQL)).rows,
      async close() {
        await pool.end();
        await dropTestDatabase(url);
      },
    };
  });
});
