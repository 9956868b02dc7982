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
