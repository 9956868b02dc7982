import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { appendFile, copyFile, mkdir, readdir, readFile, stat, truncate, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { FatalError } from "../src/core/errors.ts";
import type { ScanRequest } from "../src/core/scan.ts";
import { type ScanQueue } from "../src/queue/scan-queue.ts";
import { createScanQueue } from "../src/queue/open-scan-queue.ts";
import { loadSqlJs } from "../src/core/sql-js.ts";
import { captureLog, makeTempDir } from "./support/capture-log.ts";
import { createManualClock } from "./support/manual-clock.ts";

const request = (n: number): ScanRequest => ({
  path: `/movies/Film ${String(n)} (2020)/Film ${String(n)} (2020).mkv`,
  kind: "file",
  source: "Radarr",
  event: "Download",
});

let temp: Awaited<ReturnType<typeof makeTempDir>>;
const logs = captureLog();
const clock = createManualClock();
const open = (dir: string, extra: { checkpointBytes?: number; checkpointRatio?: number } = {}): Promise<ScanQueue> =>
  createScanQueue({ file: join(dir, "queue.db"), clock, log: logs.log, scanDelayMs: 1000, ...extra });

/**
 * The disk as a crash now would leave it, copied while the queue is still open (a checkpoint may be running). The
 * journals go first, then the previous snapshot, and the file last: a journal is deleted only after the files that
 * contain it are in place, so this order never misses a change that any of them held.
 */
async function crashCopy(dir: string): Promise<string> {
  const copy = join(temp.dir, `crash-${String(Math.random()).slice(2)}`);
  await mkdir(copy);
  const names = await readdir(dir);
  for (const name of [...names.filter((n) => n.includes(".journal.")), "queue.db.prev", "queue.db"]) {
    await copyFile(join(dir, name), join(copy, name)).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== "ENOENT") throw error;
    });
  }
  return copy;
}

/** A queue file holding two waiting requests, then changed by `sql` into what an older autoscan wrote; its folder. */
/** The schema as autoscan wrote it before step 9: no ready time, the due and next times indexed on their own. */
const AS_SCHEMA_8 = `
  ALTER TABLE items DROP COLUMN refresh;
  ALTER TABLE item_targets DROP COLUMN refresh;
  ALTER TABLE item_targets DROP COLUMN refresh_detail;
  DROP INDEX deliveries_next;
  DROP INDEX items_due_check;
  DROP INDEX items_due_target;
  DROP INDEX items_pending_ready;
  CREATE INDEX items_pending_order ON items (priority, first_at) WHERE state = 'pending';
  ALTER TABLE items DROP COLUMN ready_at;
  CREATE INDEX items_pending_due ON items (due_at) WHERE state = 'pending';
  CREATE INDEX items_pending_next ON items (next_at) WHERE state = 'pending';`;

async function fileAsOlderAutoscanWroteIt(sql: string): Promise<string> {
  const dir = join(temp.dir, "live");
  const queue = await open(dir);
  await queue.enqueue([request(1), request(2)]);
  await queue.close();
  const db = new (await loadSqlJs()).Database(await readFile(join(dir, "queue.db")));
  db.exec(sql);
  await writeFile(join(dir, "queue.db"), db.export());
  db.close();
  return dir;
}

beforeEach(async () => {
  temp = await makeTempDir();
  logs.records.length = 0;
});
afterEach(() => temp.cleanup());

describe("durability", () => {
  it("has every acknowledged request on disk without a clean close", async () => {
    const dir = join(temp.dir, "live");
    const queue = await open(dir);
    await Promise.all(Array.from({ length: 50 }, (_, n) => queue.enqueue([request(n)])));
    const copy = await crashCopy(dir);
    await queue.close();

    const restored = await open(copy);
    expect(await restored.pendingCount()).toBe(50);
    expect(logs.messages()).toContain(`Restored 50 scan request(s) from '${join(copy, "queue.db")}'.`);
    await restored.close();
  });

  it("folds the journal into the file at checkpoints and still loses nothing", async () => {
    const dir = join(temp.dir, "live");
    const queue = await open(dir, { checkpointBytes: 20_000, checkpointRatio: 0 });
    for (let n = 0; n < 200; n++) await queue.enqueue([request(n)]);
    const journals = (await readdir(dir)).filter((name) => name.includes(".journal."));
    expect(journals.length).toBeLessThanOrEqual(2);
    const copy = await crashCopy(dir);
    await queue.close();
    const restored = await open(copy);
    expect(await restored.pendingCount()).toBe(200);
    await restored.close();
  });

  it("leaves the queue file, its previous snapshot and the log since that one after a clean close", async () => {
    const dir = join(temp.dir, "live");
    const queue = await open(dir);
    await queue.enqueue([request(1), request(2)]);
    await queue.close();
    const names = await readdir(dir);
    expect(names).toEqual(expect.arrayContaining(["queue.db", "queue.db.prev"]));
    const others = names.filter((name) => name !== "queue.db" && name !== "queue.db.prev" && name !== "autoscan.lock");
    expect(others.every((name) => /^queue\.db\.journal\.\d+$/.test(name))).toBe(true);
    const again = await open(dir);
    expect(await again.pendingCount()).toBe(2);
    await again.close();
  });

  it("gives the pages of removed folders back at a checkpoint: the queue file shrinks", async () => {
    const dir = join(temp.dir, "live");
    const queue = await open(dir);
    const padded = (n: number): ScanRequest => ({ ...request(n), path: `/movies/${"x".repeat(400)} ${String(n)}/film.mkv` });
    const { items } = await queue.enqueue(Array.from({ length: 2000 }, (_, n) => padded(n)));
    await queue.close();
    const full = (await stat(join(dir, "queue.db"))).size;
    const again = await open(dir);
    for (const { id } of items.slice(0, 1800)) if (id !== undefined) await again.remove(id);
    await again.close();
    const shrunk = (await stat(join(dir, "queue.db"))).size;
    expect(shrunk).toBeLessThan(full / 3);
    const last = await open(dir);
    expect(await last.pendingCount()).toBe(200);
    await last.close();
  });

  it("switches a file written without incremental vacuum over at open, keeping every row", async () => {
    const dir = await fileAsOlderAutoscanWroteIt("PRAGMA auto_vacuum = NONE; VACUUM");
    const sql = await loadSqlJs();
    const old = new sql.Database(await readFile(join(dir, "queue.db")));
    expect(old.exec("PRAGMA auto_vacuum")[0]?.values[0]?.[0]).toBe(0);
    old.close();
    const again = await open(dir);
    expect(await again.pendingCount()).toBe(2);
    await again.close();
    const reopened = new sql.Database(await readFile(join(dir, "queue.db")));
    expect(reopened.exec("PRAGMA auto_vacuum")[0]?.values[0]?.[0]).toBe(2);
    reopened.close();
  });

  it("ignores a torn last journal line (a write cut short by the crash)", async () => {
    const dir = join(temp.dir, "live");
    const queue = await open(dir);
    await queue.enqueue([request(1)]);
    const copy = await crashCopy(dir);
    await queue.close();
    const journal = (await readdir(copy)).find((name) => name.includes(".journal."));
    if (!journal) throw new Error("no journal");
    await appendFile(join(copy, journal), '0badf00d {"s":99,"c":[{"k":"del"');
    const restored = await open(copy);
    expect(await restored.pendingCount()).toBe(1);
    await restored.close();
  });
});

describe("a damaged queue file", () => {
  it("moves a file that is not a database aside with a clear log line and starts empty", async () => {
    const dir = join(temp.dir, "live");
    await open(dir).then((q) => q.close());
    await writeFile(join(dir, "queue.db"), "this is not a database, it is a shopping list\n".repeat(200));
    const queue = await open(dir);
    expect(await queue.pendingCount()).toBe(0);
    const aside = (await readdir(dir)).find((name) => name.startsWith("queue.db.corrupt-"));
    expect(aside).toBeDefined();
    const line = logs.records.find((r) => r.msg.includes("is damaged"));
    expect(line?.msg).toContain(`moved it aside to '${join(dir, aside ?? "")}'`);
    await queue.enqueue([request(1)]);
    await queue.close();
  });

  it("moves a truncated file aside and still replays the journal beside it", async () => {
    const dir = join(temp.dir, "live");
    const seed = await open(dir);
    for (let n = 0; n < 300; n++) await seed.enqueue([request(n)]);
    await seed.close();
    const queue = await open(dir);
    await queue.enqueue([request(1000)]);
    const copy = await crashCopy(dir);
    await queue.close();
    const size = (await readFile(join(copy, "queue.db"))).length;
    await truncate(join(copy, "queue.db"), Math.floor(size / 2));

    const restored = await open(copy);
    expect((await restored.listPending({ limit: 1000 })).map((i) => i.folder)).toContain("/movies/Film 1000 (2020)");
    expect((await readdir(copy)).some((name) => name.startsWith("queue.db.corrupt-"))).toBe(true);
    await restored.close();
  });

  it("takes a file written before the ready time (schema 8): its waiting folders are due when they were, and wake it", async () => {
    const dir = await fileAsOlderAutoscanWroteIt(`${AS_SCHEMA_8} PRAGMA user_version = 8;`);
    const reopened = await open(dir);
    const dueAt = clock.now() + 1000;
    expect(await reopened.nextWakeAt(clock.now())).toBe(dueAt);
    expect(await reopened.dueForCheck(dueAt - 1, 10, new Set())).toEqual([]);
    expect((await reopened.dueForCheck(dueAt, 10, new Set())).map((item) => item.folder)).toEqual([
      "/movies/Film 1 (2020)",
      "/movies/Film 2 (2020)",
    ]);
    await reopened.close();
    const after = new (await loadSqlJs()).Database(await readFile(join(dir, "queue.db")));
    expect(after.exec("SELECT DISTINCT ready_at FROM items")[0]?.values).toEqual([[dueAt]]);
    after.close();
  });

  it("takes a file written before the path key (schema 6): its waiting requests are found again by the new index", async () => {
    // As autoscan wrote it at schema 6: requests indexed by (item_id, path), no key column.
    const dir = await fileAsOlderAutoscanWroteIt(`
      ${AS_SCHEMA_8}
      DROP INDEX requests_item_order;
      DROP INDEX requests_item_key;
      ALTER TABLE requests DROP COLUMN path_key;
      CREATE INDEX requests_item_path ON requests (item_id, path);
      PRAGMA user_version = 6;
    `);
    const sql = await loadSqlJs();
    const reopened = await open(dir);
    await reopened.enqueue([request(1), request(2), request(3)]);
    const pending = await reopened.listPending();
    expect(pending.map((item) => item.requests.length)).toEqual([1, 1, 1]);
    await reopened.close();
    const after = new sql.Database(await readFile(join(dir, "queue.db")));
    expect(after.exec("PRAGMA user_version")[0]?.values[0]?.[0]).toBe(10);
    expect(after.exec("SELECT COUNT(*) FROM requests WHERE path_key = 0")[0]?.values[0]?.[0]).toBe(0);
  });

  it("refuses a file from a newer autoscan and leaves it untouched", async () => {
    const dir = join(temp.dir, "live");
    await open(dir).then((q) => q.close());
    const sql = await loadSqlJs();
    const db = new sql.Database(await readFile(join(dir, "queue.db")));
    db.exec("PRAGMA user_version = 42");
    const bytes = db.export();
    await writeFile(join(dir, "queue.db"), bytes);
    await expect(open(dir)).rejects.toBeInstanceOf(FatalError);
    await expect(open(dir)).rejects.toThrow(/schema version 42/);
    expect(Buffer.compare(await readFile(join(dir, "queue.db")), Buffer.from(bytes))).toBe(0);
  });
});

describe("health", () => {
  it("is healthy while open and not after close", async () => {
    const queue = await open(join(temp.dir, "live"));
    expect(queue.isHealthy()).toBe(true);
    await queue.close();
    expect(queue.isHealthy()).toBe(false);
  });
});
