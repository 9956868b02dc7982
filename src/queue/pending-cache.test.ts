import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { migrations } from "./migrations/index.ts";
import { createRowAccess, type ItemRow, type ItemState, type RowAccess } from "./rows.ts";
import { loadSqlJs, type Database } from "./sql-js.ts";

/**
 * The in-memory copy of each folder's waiting item must always be the stored row: a random mix of item writes
 * (REPLACEs that collide on the id or on the one-pending-per-folder index, column UPDATEs, state changes), deletes,
 * prunes and rolled-back transactions, checked against the database after every step.
 */
const FOLDERS = ["/tv/A", "/tv/B", "/tv/C"];
const STATES: ItemState[] = ["pending", "done", "failed"];

type Op =
  | { readonly kind: "write"; readonly id: number; readonly folder: string; readonly state: ItemState; readonly due: number }
  | { readonly kind: "merge"; readonly folder: string; readonly due: number }
  | { readonly kind: "del"; readonly id: number }
  | { readonly kind: "prune" }
  | { readonly kind: "rollback"; readonly inner: readonly Op[] };

const id = fc.integer({ min: 1, max: 6 });
const folder = fc.constantFrom(...FOLDERS);
const due = fc.integer({ min: 0, max: 1000 });
const simpleOp: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant("write" as const), id, folder, state: fc.constantFrom(...STATES), due }),
  fc.record({ kind: fc.constant("merge" as const), folder, due }),
  fc.record({ kind: fc.constant("del" as const), id }),
  fc.record({ kind: fc.constant("prune" as const) }),
);
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: simpleOp },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("rollback" as const), inner: fc.array(simpleOp, { maxLength: 4 }) }) },
);

function item(id: number, folder: string, state: ItemState, due: number): ItemRow {
  return {
    id, folder, state, priority: 0, first_at: 1, last_at: 1, due_at: due, next_at: 0, rev: 1, checks: 0,
    scan_folder: null, files: null, attempts: 0, first_failed_at: null, last_error: null,
    finished_at: state === "pending" ? null : due,
  };
}

function apply(rows: RowAccess, step: Op): void {
  switch (step.kind) {
    case "write":
      return rows.apply({ k: "item", r: item(step.id, step.folder, step.state, step.due) });
    case "merge": {
      // As a merge does it: read the waiting row, write it back changed, passing the row read.
      const stored = rows.pendingItem(step.folder);
      if (stored) rows.apply({ k: "item", r: { ...stored, due_at: step.due, rev: stored.rev + 1 } }, stored);
      return;
    }
    case "del":
      return rows.apply({ k: "del", id: step.id });
    case "prune":
      return rows.apply({ k: "prune", before: 500, keep: 1 });
    case "rollback":
      rows.run("BEGIN");
      for (const inner of step.inner) apply(rows, inner);
      return rows.run("ROLLBACK");
  }
}

describe("the waiting item of each folder, kept in memory", () => {
  let db: Database;
  beforeEach(async () => {
    const sql = await loadSqlJs();
    db = new sql.Database();
    for (const migration of migrations) db.exec(migration.sql);
  });
  afterEach(() => db.close());

  it("always equals the row in the database", () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40 }), (ops) => {
        db.exec("DELETE FROM items");
        const rows = createRowAccess(db);
        const check = createRowAccess(db);
        try {
          for (const step of ops) {
            apply(rows, step);
            for (const f of FOLDERS) {
              const stored = check.get<ItemRow>("SELECT * FROM items WHERE state = 'pending' AND folder = ?", [f]);
              expect(rows.pendingItem(f)).toEqual(stored);
            }
          }
        } finally {
          rows.free();
          check.free();
        }
      }),
      { numRuns: 300 },
    );
  });
});
