import type { ItemRow } from "../store-rows.ts";

/**
 * What is due, for whom, in what order, and when to wake: written once, in SQL both engines read alike (`?N`
 * placeholders; the PostgreSQL reader numbers them). The sql.js adapter runs these queries as they are; PostgreSQL
 * runs the same text inside its claim (`postgres/claims.ts` adds the lease and `SKIP LOCKED`).
 *
 * A waiting item is ready at `ready_at`: the later of the end of its scan delay (`due_at`) and its own wait (`next_at`:
 * the next file check, a retry). Both adapters store it with every item image they write (`readyAt`), on an index of
 * the waiting items. A target's failed delivery of an item waits until its `next_at`; a given-up one waits forever.
 */
export const readyAt = (item: Pick<ItemRow, "due_at" | "next_at">): number => Math.max(item.due_at, item.next_at);

/** The dispatch order: the highest priority first (the lowest number), then the oldest folder, then the first stored. */
export const DUE_ORDER = "priority, first_at, id";

/** A failed delivery (`d`) given up: it waits forever, whatever its `next_at`. */
const GIVEN_UP = "d.failed = 1";

/**
 * Due work is found by walking the waiting items in dispatch order (`items_due_check`, `items_due_target`: one index
 * for the unchecked, one for the checked, each in that order with `ready_at` beside it) and stopping at the limit.
 * `+ready_at` keeps the engines from taking the `ready_at` index instead (the unary plus changes nothing else): that
 * would read and sort every ready item at each call, and after an outage 30,000 folders are ready at once.
 */
const READY = "state = 'pending' AND +ready_at <= ?1";

/** Waiting items ready at ?1 whose files were not checked yet. */
export const DUE_FOR_CHECK = `${READY} AND scan_folder IS NULL`;

/** Waiting items ready at ?1, checked, that target ?3 has not finished and whose delivery to it does not wait. */
export const DUE_FOR_TARGET = `${READY} AND scan_folder IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM item_targets t WHERE t.item_id = items.id AND t.target = ?3)
  AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.item_id = items.id AND d.target = ?3 AND (${GIVEN_UP} OR d.next_at > ?1))`;

/** The first ?2 items of `due` (with `and`, an engine's own condition) in dispatch order. */
export const selectDue = (due: string, columns = "*", and = ""): string =>
  `SELECT ${columns} FROM items WHERE ${due}${and} ORDER BY ${DUE_ORDER} LIMIT ?2`;

/** When, after ?1, a waiting item becomes ready (`ready`) and a delivery's wait ends (`delivery`): a select list. */
export const NEXT_READY = `
  (SELECT MIN(ready_at) FROM items WHERE state = 'pending' AND ready_at > ?1) AS ready,
  (SELECT MIN(d.next_at) FROM deliveries d JOIN items i ON i.id = d.item_id
    WHERE i.state = 'pending' AND NOT ${GIVEN_UP} AND d.next_at > ?1) AS delivery`;

/** Target ?1's failed deliveries of waiting items, not given up, that first failed at or before ?2. */
export const DELIVERIES_FAILING_SINCE = `SELECT d.* FROM deliveries d JOIN items i ON i.id = d.item_id
  WHERE i.state = 'pending' AND d.target = ?1 AND NOT ${GIVEN_UP} AND d.first_failed_at <= ?2 ORDER BY d.item_id`;

/** The earliest of the times given (those `NEXT_READY` answers, and an engine's own), if any. */
export function earliest(...times: readonly (number | null | undefined)[]): number | undefined {
  const known = times.filter((t): t is number => typeof t === "number");
  return known.length === 0 ? undefined : Math.min(...known);
}

export const PENDING_COUNT = "SELECT COUNT(*) AS n FROM items WHERE state = 'pending'";
