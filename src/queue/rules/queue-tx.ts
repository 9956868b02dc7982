import type { DeliveryRow, ItemRow, RequestRow, TargetRow } from "../store-rows.ts";

/**
 * The storage port under the queue's rules: what differs between the engines, and nothing else. Each write runs
 * against one `QueueTx`: a transaction of its own with PostgreSQL, one savepoint of the next log record with the
 * embedded sql.js store. Reads see the write's own changes; an item read here is locked for the write where the
 * engine locks rows (PostgreSQL: `FOR UPDATE`). The rules (`enqueue.ts`, `dispatch-records.ts`, `admin.ts`) decide;
 * an adapter only reads and stores rows.
 */
export interface QueueTx {
  /** The store's time for this write, ms since the epoch (with PostgreSQL the database's clock, never an instance's). */
  readonly now: number;
  /** Takes the folders' write locks, always in one order, before their items are read (PostgreSQL: advisory locks). */
  lockFolders(folders: readonly string[]): Promise<void>;
  /** The folder's waiting item, if any (at most one per folder). */
  pendingItem(folder: string): Promise<ItemRow | undefined>;
  item(id: number): Promise<ItemRow | undefined>;
  /** The item as stored, read without locking it: only to learn which folder's lock to take first (`lock-item.ts`). */
  peekItem(id: number): Promise<ItemRow | undefined>;
  /** `target`'s failed deliveries of waiting items, not given up, that first failed at or before `since`. */
  deliveriesFailingSince(target: string, since: number): Promise<DeliveryRow[]>;
  /** The failed items, by id; with `reasonStartsWith`, only those whose reason (`last_error`) starts so. */
  failedItemIds(reasonStartsWith?: string): Promise<number[]>;
  /** Stores a new item and answers it with the id the store gave it. */
  insertItem(row: Omit<ItemRow, "id">): Promise<ItemRow>;
  /** Replaces the stored image of an item (never its claim). */
  updateItem(row: ItemRow): Promise<void>;
  /** Deletes an item with its requests and target results. */
  deleteItem(id: number): Promise<void>;
  /** Whether the item already holds this very request (an *arr retrying its webhook). */
  hasRequest(row: NewRequest): Promise<boolean>;
  /** Stores a request (the store numbers requests in arrival order). */
  addRequest(row: NewRequest): Promise<void>;
  countRequests(itemId: number): Promise<number>;
  /** Whether every request of the item has a kind no one knows yet (`unknown`: its key is the path as given). */
  onlyUnknownRequests(itemId: number): Promise<boolean>;
  /** Keeps an item's first `keep` requests (by arrival). */
  keepFirstRequests(itemId: number, keep: number): Promise<void>;
  /** Deletes at most `limit` of an item's requests after its first `keep` (by arrival); answers how many. */
  dropRequestsAfter(itemId: number, keep: number, limit: number): Promise<number>;
  moveRequests(fromItem: number, toItem: number): Promise<void>;
  /** Every request of the item, by arrival (a retry maps their received paths again: `admin.ts`). */
  itemRequests(itemId: number): Promise<RequestRow[]>;
  /** Deletes one request of the item (it went to another folder). */
  deleteRequest(itemId: number, id: number): Promise<void>;
  finishedTargets(itemId: number): Promise<string[]>;
  /** The target's row of the item (it finished the folder), if any. */
  target(itemId: number, target: string): Promise<TargetRow | undefined>;
  putTarget(row: TargetRow): Promise<void>;
  /** Forgets which targets finished an item, and their failed deliveries (new work arrived for it). */
  clearTargets(itemId: number): Promise<void>;
  /** The item's failed deliveries (waiting, or given up), by target. */
  deliveries(itemId: number): Promise<DeliveryRow[]>;
  putDelivery(row: DeliveryRow): Promise<void>;
  /** Forgets a target's failed delivery (it has scanned the folder now). */
  dropDelivery(itemId: number, target: string): Promise<void>;
  /** Forgets every failed delivery of the item (a retry starts afresh). */
  clearDeliveries(itemId: number): Promise<void>;
  historyStats(): Promise<{ readonly count: number; readonly oldest: number | null }>;
  /** Drops history finished before `before`, and all but the newest `keep` history rows; answers how many. */
  pruneHistory(before: number, keep: number): Promise<number>;
  /** Several instances: whether this instance holds the item's claim now. One process: always. */
  holdsClaim(item: ItemRow): boolean;
  /** Several instances: lets go of the item's claim, so any instance may take it. One process: nothing. */
  releaseClaim(id: number): Promise<void>;
  /** A note kept with the queue under `key` (how far an import got). */
  note(key: string): Promise<string | undefined>;
  /** Keeps (undefined: forgets) a note, stored with the rest of this write or not at all. */
  putNote(key: string, value: string | undefined): Promise<void>;
}

export type NewRequest = Omit<RequestRow, "id">;
