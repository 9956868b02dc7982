import { describe, expect, it } from "vitest";
import { migrateDatabase } from "./migrate.ts";
import { migrations } from "./migrations/index.ts";
import { createRowAccess, type ItemRow } from "./rows.ts";
import { loadSqlJs } from "./sql-js.ts";

const item = (id: number, folder: string, fields: Partial<ItemRow> = {}): ItemRow => ({
  id,
  folder,
  state: "pending",
  priority: 0,
  first_at: 1,
  last_at: 1,
  due_at: 10,
  next_at: 0,
  rev: 1,
  checks: 2,
  scan_folder: "/tv/A",
  files: "[]",
  attempts: 0,
  first_failed_at: null,
  last_error: null,
  finished_at: null,
  ...fields,
});

async function openRows() {
  const db = new (await loadSqlJs()).Database();
  migrateDatabase(db, migrations, "/x/queue.db");
  return createRowAccess(db);
}

describe("row access: item images written against the stored row", () => {
  it("stores the same row as a whole-row write", async () => {
    const rows = await openRows();
    const stored = item(1, "/tv/A");
    rows.apply({ k: "item", r: stored });
    const next = item(1, "/tv/A", { priority: -1, last_at: 5, due_at: 20, rev: 2, checks: 0, scan_folder: null, files: null });
    rows.apply({ k: "item", r: next }, stored);
    expect(rows.all("SELECT * FROM items")).toEqual([next]);
  });

  it("resolves a folder's pending-row conflict as a whole-row write does", async () => {
    const rows = await openRows();
    const done = item(1, "/tv/A", { state: "done", finished_at: 3 });
    rows.apply({ k: "item", r: done });
    rows.apply({ k: "item", r: item(2, "/tv/A") });
    // A journal replayed onto a newer file: item 1's older, pending image replaces the other pending row of its folder.
    rows.apply({ k: "item", r: item(1, "/tv/A") }, done);
    expect(rows.all<ItemRow>("SELECT * FROM items").map((row) => [row.id, row.state])).toEqual([[1, "pending"]]);
  });
});
