import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { mkdir, readFile, readdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { createDiskProbe } from "../src/paths/disk-probe.ts";
import { createKindResolver } from "../src/queue/resolve-kind.ts";
import type { ScanQueue } from "../src/queue/scan-queue.ts";
import { createScanQueue } from "../src/queue/sqljs/sqljs-adapter.ts";
import { loadSqlJs } from "../src/queue/sqljs/sql-js.ts";
import { captureLog, makeTempDir } from "./support/capture-log.ts";
import { createManualClock } from "./support/manual-clock.ts";

/** The tables as plex_autoscan's peewee models (l3uddz) and by275's SQLAlchemy model created them. */
const L3UDDZ_SCHEMA = `CREATE TABLE "queueitemmodel" ("id" INTEGER NOT NULL PRIMARY KEY, "scan_path" VARCHAR(255) NOT NULL,
  "scan_for" VARCHAR(255) NOT NULL, "scan_section" INTEGER NOT NULL, "scan_type" VARCHAR(255) NOT NULL);
  CREATE UNIQUE INDEX "queueitemmodel_scan_path" ON "queueitemmodel" ("scan_path");`;
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

/**
 * The queue as the service opens it: a legacy path's kind (file or folder) is looked up on disk, under `<temp>/media`
 * here. Paths the disk does not have stay as they were written.
 */
const open = (file: string, logs = captureLog()) =>
  createScanQueue({
    file,
    clock: createManualClock(),
    log: logs.log,
    scanDelayMs: 180_000,
    resolveKind: createKindResolver({
      localForms: (path) => [join(temp.dir, "media", path)],
      statPath: createDiskProbe({ log: logs.log }).stat,
      log: logs.log,
    }),
  });

/** The pending folders once the kinds looked up in the background (after the import is stored) have been applied. */
async function pendingFolders(queue: ScanQueue, expected: readonly string[]): Promise<string[]> {
  let folders: string[] = [];
  for (let i = 0; i < 100; i++) {
    folders = (await queue.listPending()).map((item) => item.folder).sort();
    if (JSON.stringify(folders) === JSON.stringify(expected)) break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return folders;
}

/** Creates files (and, for a path ending in `/`, folders) under `<temp>/media`. */
async function onDisk(...paths: string[]): Promise<void> {
  for (const path of paths) {
    const local = join(temp.dir, "media", path);
    if (path.endsWith("/")) await mkdir(local, { recursive: true });
    else {
      await mkdir(dirname(local), { recursive: true });
      await writeFile(local, "");
    }
  }
}

describe("importing plex_autoscan's queue", () => {
  it("imports l3uddz's queueitemmodel rows once, keeps the old file, and says so", async () => {
    const file = join(temp.dir, "queue.db");
    const original = await writeLegacy(
      file,
      L3UDDZ_SCHEMA,
      `INSERT INTO queueitemmodel VALUES (1, '/mnt/unionfs/TV/Show/Season 01/Show - S01E01.mkv', 'Sonarr', 2, 'Download');
       INSERT INTO queueitemmodel VALUES (2, '/mnt/unionfs/TV/Show/Season 01/Show - S01E02.mkv', 'Sonarr', 2, 'Upgrade');
       INSERT INTO queueitemmodel VALUES (3, '/mnt/unionfs/Movies/Film (2020)', 'Manual', 1, 'Manual');
       INSERT INTO queueitemmodel VALUES (4, 'not/a/full/path.mkv', 'Manual', 1, 'Manual');`,
    );
    await onDisk(
      "/mnt/unionfs/TV/Show/Season 01/Show - S01E01.mkv",
      "/mnt/unionfs/TV/Show/Season 01/Show - S01E02.mkv",
      "/mnt/unionfs/Movies/Film (2020)/",
    );
    const logs = captureLog();
    const queue = await open(file, logs);
    const expected = ["/mnt/unionfs/Movies/Film (2020)", "/mnt/unionfs/TV/Show/Season 01"];
    expect(await pendingFolders(queue, expected)).toEqual(expected);
    const season = (await queue.listPending()).find((i) => i.folder.endsWith("Season 01"));
    expect(season?.requests.map((r) => [r.source, r.event])).toEqual([
      ["Sonarr", "Download"],
      ["Sonarr", "Upgrade"],
    ]);
    const backup = `${file}.plex_autoscan.bak`;
    expect(logs.messages()).toContain(
      `Imported 3 scan request(s) from the plex_autoscan queue in '${file}' (the old file is kept as '${backup}').`,
    );
    expect(Buffer.compare(await readFile(backup), Buffer.from(original))).toBe(0);
    await queue.close();

    const again = captureLog();
    const reopened = await open(file, again);
    expect(await reopened.pendingCount()).toBe(2);
    expect(again.messages().some((m) => m.startsWith("Imported"))).toBe(false);
    await reopened.close();
  });

  it("imports by275's scan_item rows", async () => {
    const file = join(temp.dir, "queue.db");
    await writeLegacy(
      file,
      BY275_SCHEMA,
      `INSERT INTO scan_item VALUES (1, '/data/movies/A (2001)/A.mkv', 'Radarr', 1, 'Download', '2024-01-01 00:00:00');
       INSERT INTO scan_item VALUES (2, '/data/movies/B (2002)/B.mkv', NULL, 1, NULL, '2024-01-01 00:00:00');`,
    );
    // A.mkv is on disk (its folder is scanned); B.mkv is not, so it stays as written: never widened to a guess.
    await onDisk("/data/movies/A (2001)/A.mkv");
    const queue = await open(file);
    const expected = ["/data/movies/A (2001)", "/data/movies/B (2002)/B.mkv"];
    expect(await pendingFolders(queue, expected)).toEqual(expected);
    const items = await queue.listPending();
    expect(items.flatMap((i) => i.requests.map((r) => r.source)).sort()).toEqual(["Radarr", "plex_autoscan"]);
    await queue.close();
    // (A journal may follow the snapshot: the kinds looked up after the import are writes of their own.)
    expect((await readdir(temp.dir)).filter((name) => name.startsWith("queue") && !name.includes(".journal.")).sort()).toEqual([
      "queue.db",
      "queue.db.plex_autoscan.bak",
      "queue.db.prev",
    ]);
  });

  it("imports an empty legacy queue as an empty queue", async () => {
    const file = join(temp.dir, "queue.db");
    await writeLegacy(file, L3UDDZ_SCHEMA, "");
    const queue = await open(file);
    expect(await queue.pendingCount()).toBe(0);
    await queue.close();
  });
});
