import { closeSync, openSync, statSync, truncateSync, writeSync } from "node:fs";
import { DatabaseSync } from "node:sqlite";

/** plex_autoscan's queue table as its peewee model (l3uddz) creates it. */
export const PLEX_AUTOSCAN_SCHEMA = `CREATE TABLE "queueitemmodel" ("id" INTEGER NOT NULL PRIMARY KEY, "scan_path" VARCHAR(255) NOT NULL,
  "scan_for" VARCHAR(255) NOT NULL, "scan_section" INTEGER NOT NULL, "scan_type" VARCHAR(255) NOT NULL);
  CREATE UNIQUE INDEX "queueitemmodel_scan_path" ON "queueitemmodel" ("scan_path");`;

/** Writes plex_autoscan's `queue.db` with one waiting row per path, in order, as Sonarr `Download`s. */
export function writePlexAutoscanQueue(file: string, paths: Iterable<string>): void {
  const db = new DatabaseSync(file);
  db.exec(PLEX_AUTOSCAN_SCHEMA);
  const insert = db.prepare("INSERT INTO queueitemmodel (scan_path, scan_for, scan_section, scan_type) VALUES (?, 'Sonarr', 2, 'Download')");
  db.exec("BEGIN");
  for (const path of paths) insert.run(path);
  db.exec("COMMIT");
  db.close();
}

/**
 * Damages a plex_autoscan `queue.db` as a disk or a copy can: `garbage` writes 64 KB of noise two-thirds in (the same
 * noise every run), `truncate` cuts the file to half its size.
 */
export function damagePlexAutoscanQueue(file: string, how: "garbage" | "truncate"): void {
  const size = statSync(file).size;
  if (how === "truncate") {
    truncateSync(file, Math.floor(size / 2));
    return;
  }
  const noise = Buffer.alloc(64 * 1024);
  let seed = 2463534242;
  for (let i = 0; i < noise.length; i++) {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    noise[i] = seed & 0xff;
  }
  const fd = openSync(file, "r+");
  try {
    writeSync(fd, noise, 0, noise.length, Math.floor((size * 2) / 3));
  } finally {
    closeSync(fd);
  }
}

/** `count` episode paths of distinct shows, as a backlog plex_autoscan would hold. */
export function backlogPaths(count: number): string[] {
  return Array.from({ length: count }, (_, n) => `/mnt/unionfs/TV/Show ${String(n)}/Season 01/Show ${String(n)} - S01E01.mkv`);
}
