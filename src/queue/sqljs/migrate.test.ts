import { describe, expect, it } from "vitest";
import { FatalError } from "../../core/errors.ts";
import { migrateDatabase, readSchemaVersion } from "./migrate.ts";
import { migrations } from "./migrations/index.ts";
import { DUE_FOR_CHECK, DUE_FOR_TARGET, NEXT_READY, selectDue } from "../rules/due.ts";
import { WORK_REQUESTS_SQL } from "../rules/work-item.ts";
import { pathKey } from "./row-access.ts";
import { loadSqlJs } from "../../core/sql-js.ts";

describe("migrateDatabase", () => {
  it("creates the schema on an empty database and records its version", async () => {
    const db = new (await loadSqlJs()).Database();
    const result = migrateDatabase(db, migrations, "/x/queue.db");
    expect(result).toEqual({ from: 0, to: migrations.length });
    expect(readSchemaVersion(db)).toBe(migrations.length);
    const tables = db.exec("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")[0]?.values.flat();
    expect(tables).toEqual(expect.arrayContaining(["items", "requests", "item_targets", "meta"]));
    expect(migrateDatabase(db, migrations, "/x/queue.db")).toEqual({ from: migrations.length, to: migrations.length });
  });

  it("looks up a folder's request by a key of its path, not by reading all of the folder's requests", async () => {
    const db = new (await loadSqlJs()).Database();
    migrateDatabase(db, migrations, "/x/queue.db");
    const plan = db.exec("EXPLAIN QUERY PLAN SELECT id FROM requests WHERE item_id = 1 AND path_key = 7 AND path = '/a'")[0]?.values.flat();
    expect(plan?.join(" ")).toMatch(/requests_item_key \(item_id=\? AND path_key=\?\)/);
  });

  it("reads a folder's requests a page at a time on the (item_id, id) index, without sorting them", async () => {
    const db = new (await loadSqlJs()).Database();
    migrateDatabase(db, migrations, "/x/queue.db");
    const plan = db.exec(`EXPLAIN QUERY PLAN ${WORK_REQUESTS_SQL}`, [1, 0, 1000])[0]?.values.flat().join(" ");
    expect(plan).toMatch(/requests_item_order \(item_id=\? AND id>\?\)/);
    expect(plan).not.toMatch(/TEMP B-TREE/);
  });

  it("keys the requests a file already holds when it takes step 7", async () => {
    const db = new (await loadSqlJs()).Database();
    migrateDatabase(db, migrations.filter((step) => step.version < 7), "/x/queue.db");
    const paths = ["/tv/Show/Season 01/Show - S01E01.mkv", "/música/Ünïcode – 𝄞.flac"];
    paths.forEach((path, i) => {
      db.run("INSERT INTO requests (id, item_id, path, kind, source, event, at) VALUES (?, 1, ?, 'file', 'Sonarr', 'Download', 0)", [i + 1, path]);
    });
    migrateDatabase(db, migrations, "/x/queue.db");
    const keys = db.exec("SELECT path, path_key FROM requests ORDER BY id")[0]?.values;
    expect(keys).toEqual(paths.map((path) => [path, pathKey(path)]));
    expect(new Set(keys?.map(([, key]) => key)).size).toBe(2);
    const indexes = db.exec("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'requests'")[0]?.values.flat();
    expect(indexes).toEqual(["requests_item_key", "requests_item_order"]);
  });

  it("gives the items a file already holds their ready time when it takes step 9", async () => {
    const db = new (await loadSqlJs()).Database();
    migrateDatabase(db, migrations.filter((step) => step.version < 9), "/x/queue.db");
    db.run(`INSERT INTO items (id, folder, state, priority, first_at, last_at, due_at, next_at) VALUES
      (1, '/a', 'pending', 0, 0, 0, 5000, 0), (2, '/b', 'pending', 0, 0, 0, 5000, 9000), (3, '/c', 'done', 0, 0, 0, 100, 0)`);
    migrateDatabase(db, migrations, "/x/queue.db");
    expect(db.exec("SELECT id, ready_at FROM items ORDER BY id")[0]?.values).toEqual([[1, 5000], [2, 9000], [3, 100]]);
  });

  it("finds what is due and when to wake on the waiting items' indexes", async () => {
    const db = new (await loadSqlJs()).Database();
    migrateDatabase(db, migrations, "/x/queue.db");
    const plan = (sql: string, params: (string | number)[]): string =>
      db.exec(`EXPLAIN QUERY PLAN ${sql}`, params)[0]?.values.map((row) => row.join(" ")).join("\n") ?? "";
    // In dispatch order, stopping at the limit: never every ready item read and sorted.
    expect(plan(selectDue(DUE_FOR_CHECK), [1, 2])).toMatch(/^\S+ \S+ \S+ SCAN items USING INDEX items_due_check$/);
    expect(plan(selectDue(DUE_FOR_TARGET), [1, 2, "plex"])).toMatch(/SCAN items USING INDEX items_due_target\n/);
    expect(plan(selectDue(DUE_FOR_TARGET), [1, 2, "plex"])).not.toMatch(/TEMP B-TREE/);
    const wake = plan(`SELECT ${NEXT_READY}`, [1]);
    expect(wake).toMatch(/items_pending_ready \(ready_at>\?\)/);
    expect(wake).toMatch(/deliveries_next \(next_at>\?\)/);
    expect(wake).not.toMatch(/SCAN (items|d|i)\b/);
  });

  it("applies steps in version order, each once", async () => {
    const db = new (await loadSqlJs()).Database();
    const steps = [
      { version: 2, name: "second", sql: "CREATE TABLE b (x)" },
      { version: 1, name: "first", sql: "CREATE TABLE a (x)" },
    ];
    migrateDatabase(db, steps, "q.db");
    expect(readSchemaVersion(db)).toBe(2);
  });

  it("rolls back a failing step and names it", async () => {
    const db = new (await loadSqlJs()).Database();
    const steps = [{ version: 1, name: "broken", sql: "CREATE TABLE a (x); THIS IS NOT SQL" }];
    expect(() => migrateDatabase(db, steps, "q.db")).toThrow(/step 1 \(broken\)/);
    expect(readSchemaVersion(db)).toBe(0);
    expect(db.exec("SELECT name FROM sqlite_master WHERE name = 'a'")).toEqual([]);
  });

  it("refuses a file written by a newer autoscan, saying what to do", async () => {
    const db = new (await loadSqlJs()).Database();
    db.exec("PRAGMA user_version = 99");
    let thrown: unknown;
    try {
      migrateDatabase(db, migrations, "/data/queue.db");
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(FatalError);
    expect(String((thrown as Error).message)).toMatch(/'\/data\/queue.db' has schema version 99.*newer autoscan/);
  });
});
