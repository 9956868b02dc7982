import { createMinHeap, type MinHeap } from "./min-heap.ts";
import type { ItemRow } from "./rows.ts";

/**
 * Which pending folders are due, without asking SQLite to walk every pending row on each dispatch. Built from the
 * stored rows at start and told of every change the store applies (nothing else writes it), it keeps per pending
 * item only what scheduling needs: when it is ready (`max(due_at, next_at)`), its dispatch order (priority, then
 * oldest, then id), whether its files were checked, and which targets finished it.
 *
 * Three kinds of heap, each O(log n) per push and pop: waiting items by ready time; ready unchecked items (for file
 * checks); and per target, ready checked items that target has not finished. An entry carries the item's version
 * when it was pushed; an entry whose item changed since is dropped when it comes to the top, and heaps are compacted
 * when stale entries outnumber live ones, so memory follows the number of pending items, not of writes.
 */
export interface DueIndex {
  /** An item image was applied: a pending item is (re)scheduled, any other state forgets it. */
  itemChanged(row: ItemRow): void;
  /** Whether a pending item is scheduled. */
  has(id: number): boolean;
  itemDeleted(id: number): void;
  targetDone(id: number, target: string): void;
  /** Forgets which targets finished an item, and its deliveries' waits. */
  targetsCleared(id: number): void;
  /** A target's delivery of an item waits until `until` (`Infinity`: given up), or no longer waits (`undefined`). */
  deliveryWaits(id: number, target: string, until: number | undefined): void;
  /** Every delivery of an item waits no longer (a retry). */
  deliveriesCleared(id: number): void;
  /** Ready items whose files have not been checked, in dispatch order, skipping `skip` (those in progress). */
  dueForCheck(now: number, limit: number, skip: ReadonlySet<number>): number[];
  /** Ready, checked items that `target` has not finished and whose delivery to it does not wait, in dispatch order,
   *  skipping `skip`. */
  dueForTarget(target: string, now: number, limit: number, skip: ReadonlySet<number>): number[];
  /** The earliest time after `now` when a waiting item becomes ready. */
  nextWakeAt(now: number): number | undefined;
  readonly size: number;
}

interface Tracked {
  readonly id: number;
  ver: number;
  readyAt: number;
  priority: number;
  firstAt: number;
  checked: boolean;
  ready: boolean;
  done?: Set<string>;
  /** Target → until when its failed delivery waits (`Infinity`: given up). */
  waits?: Map<string, number>;
}

interface TimeEntry {
  readonly id: number;
  readonly ver: number;
  readonly at: number;
}

interface OrderEntry {
  readonly id: number;
  readonly ver: number;
  readonly priority: number;
  readonly firstAt: number;
}

const byTime = (a: TimeEntry, b: TimeEntry): boolean => a.at < b.at || (a.at === b.at && a.id < b.id);
const byOrder = (a: OrderEntry, b: OrderEntry): boolean =>
  a.priority !== b.priority ? a.priority < b.priority : a.firstAt !== b.firstAt ? a.firstAt < b.firstAt : a.id < b.id;

export interface IndexedItem {
  readonly row: ItemRow;
  readonly doneTargets: readonly string[];
  /** Failed deliveries: target → until when each waits (`Infinity`: given up). */
  readonly waits?: ReadonlyMap<string, number>;
}

export function createDueIndex(initial: Iterable<IndexedItem> = []): DueIndex {
  const items = new Map<number, Tracked>();
  const waiting = createMinHeap<TimeEntry>(byTime);
  const unchecked = createMinHeap<OrderEntry>(byOrder);
  const perTarget = new Map<string, MinHeap<OrderEntry>>();
  /** When deliveries' waits end, for `nextWakeAt` (an entry whose wait changed since is dropped when it comes up). */
  const waitEnds = createMinHeap<{ readonly id: number; readonly target: string; readonly at: number }>((a, b) => a.at < b.at);

  const orderEntry = (t: Tracked): OrderEntry => ({ id: t.id, ver: t.ver, priority: t.priority, firstAt: t.firstAt });
  const current = (entry: { id: number; ver: number }): Tracked | undefined => {
    const t = items.get(entry.id);
    return t && t.ver === entry.ver ? t : undefined;
  };
  const dueForCheckEntry = (e: OrderEntry): boolean => {
    const t = current(e);
    return t !== undefined && t.ready && !t.checked;
  };
  const dueForTargetEntry = (target: string) => (e: OrderEntry): boolean => {
    const t = current(e);
    return t !== undefined && t.ready && t.checked && !t.done?.has(target);
  };

  /** Versions are counted across all items: an item that leaves and comes back never matches its old entries. */
  let versions = 0;
  function schedule(t: Tracked): void {
    t.ver = ++versions;
    t.ready = false;
    waiting.push({ id: t.id, ver: t.ver, at: t.readyAt });
    compact();
  }

  function promote(now: number): void {
    for (let top = waiting.peek(); top && top.at <= now; top = waiting.peek()) {
      waiting.pop();
      const t = current(top);
      if (!t) continue;
      t.ready = true;
      if (!t.checked) unchecked.push(orderEntry(t));
      else for (const [target, heap] of perTarget) if (!t.done?.has(target)) heap.push(orderEntry(t));
    }
  }

  /** Takes up to `limit` valid entries not in `skip` and not `held` (a delivery waiting): those stay in the heap. */
  function take(
    heap: MinHeap<OrderEntry>,
    valid: (e: OrderEntry) => boolean,
    limit: number,
    skip: ReadonlySet<number>,
    held: (id: number) => boolean = () => false,
  ): number[] {
    const kept: OrderEntry[] = [];
    const out: number[] = [];
    while (out.length < limit && heap.size > 0) {
      const entry = heap.pop() as OrderEntry;
      if (!valid(entry)) continue;
      kept.push(entry);
      if (!skip.has(entry.id) && !held(entry.id)) out.push(entry.id);
    }
    for (const entry of kept) heap.push(entry);
    return out;
  }

  function targetHeap(target: string): MinHeap<OrderEntry> {
    let heap = perTarget.get(target);
    if (!heap) {
      heap = createMinHeap<OrderEntry>(byOrder);
      for (const t of items.values()) if (t.ready && t.checked && !t.done?.has(target)) heap.push(orderEntry(t));
      perTarget.set(target, heap);
    }
    return heap;
  }

  /** Drops stale entries once they outnumber the live items (each heap holds at most one live entry per item). */
  function compact(): void {
    const bound = 2 * items.size + 1024;
    if (waiting.size > bound) waiting.retain((e) => current(e)?.ready === false);
    if (unchecked.size > bound) unchecked.retain(dueForCheckEntry);
    for (const [target, heap] of perTarget) if (heap.size > bound) heap.retain(dueForTargetEntry(target));
  }

  const index: DueIndex = {
    itemChanged(row) {
      if (row.state !== "pending") return index.itemDeleted(row.id);
      const existing = items.get(row.id);
      const t: Tracked = existing ?? { id: row.id, ver: 0, readyAt: 0, priority: 0, firstAt: 0, checked: false, ready: false };
      t.readyAt = Math.max(row.due_at, row.next_at);
      t.priority = row.priority;
      t.firstAt = row.first_at;
      t.checked = row.scan_folder !== null;
      items.set(row.id, t);
      schedule(t);
    },
    itemDeleted(id) {
      items.delete(id);
    },
    has: (id) => items.has(id),
    targetDone(id, target) {
      const t = items.get(id);
      if (!t) return;
      t.done ??= new Set();
      t.done.add(target);
    },
    targetsCleared(id) {
      const t = items.get(id);
      if (!t) return;
      t.waits = undefined;
      if (!t.done) return;
      t.done = undefined;
      schedule(t);
    },
    deliveryWaits(id, target, until) {
      const t = items.get(id);
      if (!t) return;
      if (until === undefined) t.waits?.delete(target);
      else {
        t.waits ??= new Map();
        t.waits.set(target, until);
        if (Number.isFinite(until)) waitEnds.push({ id, target, at: until });
        if (waitEnds.size > 2 * items.size + 1024) waitEnds.retain((e) => items.get(e.id)?.waits?.get(e.target) === e.at);
      }
    },
    deliveriesCleared(id) {
      const t = items.get(id);
      if (t) t.waits = undefined;
    },
    dueForCheck(now, limit, skip) {
      promote(now);
      return take(unchecked, dueForCheckEntry, limit, skip);
    },
    dueForTarget(target, now, limit, skip) {
      promote(now);
      const waits = (id: number): boolean => (items.get(id)?.waits?.get(target) ?? 0) > now;
      return take(targetHeap(target), dueForTargetEntry(target), limit, skip, waits);
    },
    nextWakeAt(now) {
      promote(now);
      let next: number | undefined;
      for (let top = waiting.peek(); top; top = waiting.peek()) {
        if (current(top)) {
          next = top.at;
          break;
        }
        waiting.pop();
      }
      // The next delivery whose wait ends (entries of waits that ended, changed or went with their item are dropped).
      for (let top = waitEnds.peek(); top; top = waitEnds.peek()) {
        if (top.at > now && items.get(top.id)?.waits?.get(top.target) === top.at) {
          return next === undefined ? top.at : Math.min(next, top.at);
        }
        waitEnds.pop();
      }
      return next;
    },
    get size() {
      return items.size;
    },
  };
  for (const { row, doneTargets, waits } of initial) {
    index.itemChanged(row);
    for (const target of doneTargets) index.targetDone(row.id, target);
    for (const [target, until] of waits ?? []) index.deliveryWaits(row.id, target, until);
  }
  return index;
}
