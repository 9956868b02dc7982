import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readFile, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { ScanQueue } from "../src/queue/scan-queue.ts";
import { createScanQueue } from "../src/queue/open-scan-queue.ts";
import { openPlexAutoscanQueue } from "../src/queue/plex-autoscan-file.ts";
import { importKey, importPlexAutoscanQueue } from "../src/queue/plex-autoscan-import.ts";
import { loadSqlJs } from "../src/core/sql-js.ts";
import { captureLog, makeTempDir } from "./support/capture-log.ts";
import { createManualClock } from "./support/manual-clock.ts";
import { PLEX_AUTOSCAN_SCHEMA } from "./support/plex-autoscan-queue.ts";

/** The tables as plex_autoscan's peewee models (l3uddz) and by275's SQLAlchemy model created them. */
const L3UDDZ_SCHEMA = PLEX_AUTOSCAN_SCHEMA;
const BY275_SCHEMA = `CREATE TABLE scan_item (id INTEGER NOT NULL, path VARCHAR NOT NULL, request_from VARCHAR,
  section_id INTEGER, event_type VARCHAR, created_at DATETIME, PRIMARY KEY (id), UNIQUE (path));`;

let temp: Awaited<ReturnType<typeof makeTempDir>>;
beforeEach(async () => {
  temp = await makeTempDir();
});
afterEach(() => temp.cleanup());

async function writeLegacy(file: string, schema: string, inserts: string): Promise<Uint8Array> {
  const db = new (await loadSqlJs()).Database();
  db.exec(schema);
  db.exec(inserts);
  const bytes = db.export();
  await writeFile(file, bytes);
  return bytes;
}

/** The queue as the service opens it; kinds are never looked up at import (the file checks do it). */
const open = (file: string, logs = captureLog()) => createScanQueue({ file, clock: createManualClock(), log: logs.log, scanDelayMs: 180_000 });

/** Waits for the import that runs beside the open queue to finish. */
async function imported(queue: ScanQueue): Promise<void> {
  for (let i = 0; i < 500 && queue.importing?.() !== undefined; i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(queue.importing?.()).toBeUndefined();
}

const pendingPaths = async (queue: ScanQueue): Promise<string[]> => (await queue.listPending()).map((item) => item.folder).sort();
describe("importing plex_autoscan's queue", () => {
  it("imports l3uddz's queueitemmodel rows once, as paths for the file checks, keeps the old file aside, and says so", async () => {
    const file = join(temp.dir, "queue.db");
    const original = await writeLegacy(
      file,
      L3UDDZ_SCHEMA,
      `INSERT INTO queueitemmodel VALUES (1, '/mnt/unionfs/TV/Show/Season 01/Show - S01E01.mkv', 'Sonarr', 2, 'Download');
       INSERT INTO queueitemmodel VALUES (2, '/mnt/unionfs/TV/Show/Season 01/Show - S01E02.mkv', 'Sonarr', 2, 'Upgrade');
       INSERT INTO queueitemmodel VALUES (3, '/mnt/unionfs/Movies/Film (2020)', 'Manual', 1, 'Manual');
       INSERT INTO queueitemmodel VALUES (4, 'not/a/full/path.mkv', 'Manual', 1, 'Manual');`,
    );
    const logs = captureLog();
    const queue = await open(file, logs);
    await imported(queue);
    // Nothing is looked up on disk at import: each path waits as it was written, of unknown kind, until its check.
    expect(await pendingPaths(queue)).toEqual([
      "/mnt/unionfs/Movies/Film (2020)",
      "/mnt/unionfs/TV/Show/Season 01/Show - S01E01.mkv",
      "/mnt/unionfs/TV/Show/Season 01/Show - S01E02.mkv",
    ]);
    const requests = (await queue.listPending()).flatMap((item) => item.requests);
    expect(requests.map((r) => [r.source, r.event, r.kind]).sort()).toEqual([
      ["Manual", "Manual", "unknown"],
      ["Sonarr", "Download", "unknown"],
      ["Sonarr", "Upgrade", "unknown"],
    ]);
    const backup = `${file}.plex_autoscan.bak`;
    expect(logs.messages().find((m) => m.startsWith("Imported"))).toBe(
      `Imported 3 scan request(s) from the plex_autoscan queue in '${file}' (the old file is kept as '${backup}'): ` +
        "3 queued, 0 merged into a waiting folder, 1 skipped (not a full path); " +
        /\d+\.\d s\.$/.exec(logs.messages().find((m) => m.startsWith("Imported")) ?? "")?.[0],
    );
    expect(Buffer.compare(await readFile(backup), Buffer.from(original))).toBe(0);
    await queue.close();
    expect((await readdir(temp.dir)).filter((name) => name.includes("plex_autoscan"))).toEqual(["queue.db.plex_autoscan.bak"]);

    const again = captureLog();
    const reopened = await open(file, again);
    expect(await reopened.pendingCount()).toBe(3);
    expect(again.messages().some((m) => m.startsWith("Imported"))).toBe(false);
    await reopened.close();
  });

  it("imports by275's scan_item rows, merging rows for one path with what waits", async () => {
    const file = join(temp.dir, "queue.db");
    await writeLegacy(
      file,
      BY275_SCHEMA,
      `INSERT INTO scan_item VALUES (1, '/data/movies/A (2001)/A.mkv', 'Radarr', 1, 'Download', '2024-01-01 00:00:00');
       INSERT INTO scan_item VALUES (2, '/data/movies/B (2002)/B.mkv', NULL, 1, NULL, '2024-01-01 00:00:00');`,
    );
    const queue = await open(file);
    await imported(queue);
    expect(await pendingPaths(queue)).toEqual(["/data/movies/A (2001)/A.mkv", "/data/movies/B (2002)/B.mkv"]);
    const items = await queue.listPending();
    expect(items.flatMap((i) => i.requests.map((r) => r.source)).sort()).toEqual(["Radarr", "plex_autoscan"]);
    await queue.close();
    expect((await readdir(temp.dir)).filter((name) => name.startsWith("queue") && !name.includes(".journal.")).sort()).toEqual([
      "queue.db",
      "queue.db.plex_autoscan.bak",
      "queue.db.prev",
    ]);
  });

  it("goes on where an interrupted import got to, storing no row twice", async () => {
    const file = join(temp.dir, "queue.db");
    const rows = Array.from({ length: 30 }, (_, n) => `INSERT INTO queueitemmodel VALUES (${String(n + 1)}, '/tv/Show ${String(n)}/S01E01.mkv', 'Sonarr', 2, 'Download');`);
    // What a restart finds after the first 20 rows were imported: the file set aside, 20 rows and their mark stored.
    const first = await open(file);
    const aside = `${file}.plex_autoscan`;
    await writeLegacy(aside, L3UDDZ_SCHEMA, rows.join("\n"));
    const opened = await openPlexAutoscanQueue(aside);
    if (opened.kind !== "queue") throw new Error("not read");
    const stop = new AbortController();
    await importPlexAutoscanQueue({
      source: opened.queue,
      queue: first,
      key: await importKey(aside),
      batchSize: 10,
      signal: stop.signal,
      onBatch: (_rowid, reached) => void (reached.done >= 20 && stop.abort()),
    });
    opened.queue.close();
    await first.close();

    const logs = captureLog();
    const partly = await open(file, logs);
    await imported(partly);
    expect(await partly.pendingCount()).toBe(30);
    expect((await partly.listPending()).every((item) => item.requests.length === 1)).toBe(true);
    expect(logs.messages().some((m) => m.includes("going on after 20 imported before a restart"))).toBe(true);
    expect(logs.messages().find((m) => m.startsWith("Imported"))).toContain("Imported 10 scan request(s)");
    expect(logs.messages().find((m) => m.startsWith("Imported"))).toContain("10 queued, 0 merged");
    await partly.close();
    expect((await readdir(temp.dir)).filter((name) => name.includes("plex_autoscan"))).toEqual(["queue.db.plex_autoscan.bak"]);
  });

  it("takes over an import an earlier autoscan began (its file kept as .bak, a marker beside it)", async () => {
    const file = join(temp.dir, "queue.db");
    const rows = Array.from({ length: 30 }, (_, n) => `INSERT INTO queueitemmodel VALUES (${String(n + 1)}, '/tv/Show ${String(n)}/S01E01.mkv', 'Sonarr', 2, 'Download');`);
    const backup = `${file}.plex_autoscan.bak`;
    await writeLegacy(backup, L3UDDZ_SCHEMA, rows.join("\n"));
    await writeFile(`${file}.plex_autoscan.import`, JSON.stringify({ backup, afterRowid: 20 }));
    const queue = await open(file);
    await imported(queue);
    expect(await queue.pendingCount()).toBe(30);
    await queue.close();
    expect((await readdir(temp.dir)).filter((name) => name.includes("plex_autoscan"))).toEqual(["queue.db.plex_autoscan.bak"]);
  });

  it("refuses to start with a second plex_autoscan queue where autoscan's goes while one is still importing", async () => {
    const file = join(temp.dir, "queue.db");
    await writeLegacy(`${file}.plex_autoscan`, L3UDDZ_SCHEMA, "INSERT INTO queueitemmodel VALUES (1, '/tv/A/S01E01.mkv', 'Sonarr', 2, 'Download');");
    const second = await writeLegacy(file, L3UDDZ_SCHEMA, "INSERT INTO queueitemmodel VALUES (1, '/tv/B/S01E01.mkv', 'Sonarr', 2, 'Download');");
    await expect(open(file)).rejects.toThrow("is still being imported: move one of them away and start again");
    expect(Buffer.compare(await readFile(file), Buffer.from(second))).toBe(0);
  });

  it("imports an empty legacy queue as an empty queue", async () => {
    const file = join(temp.dir, "queue.db");
    await writeLegacy(file, L3UDDZ_SCHEMA, "");
    const queue = await open(file);
    await imported(queue);
    expect(await queue.pendingCount()).toBe(0);
    await queue.close();
  });
});
