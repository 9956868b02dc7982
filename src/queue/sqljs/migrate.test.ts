import { describe, expect, it } from "vitest";
import { FatalError } from "../../core/errors.ts";
import { migrateDatabase, readSchemaVersion } from "./migrate.ts";
import { migrations } from "./migrations/index.ts";
import { loadSqlJs } from "./sql-js.ts";

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

  it("looks up a folder's request by path through an index, not by reading all of the folder's requests", async () => {
    const db = new (await loadSqlJs()).Database();
    migrateDatabase(db, migrations, "/x/queue.db");
    const plan = db.exec("EXPLAIN QUERY PLAN SELECT id FROM requests WHERE item_id = 1 AND path = '/a'")[0]?.values.flat();
    expect(plan?.join(" ")).toMatch(/requests_item_path \(item_id=\? AND path=\?\)/);
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
