import type { DispatchQueue } from "./dispatch/dispatch-port.ts";
import type { QueueTx } from "./rules/queue-tx.ts";

/**
 * The store port: what one storage engine gives the queue (`scan-queue.ts` puts the rules over it): writes in
 * transactions through the `QueueTx` port, reads in SQL both engines read alike, and what differs in how due work is
 * found and claimed (PostgreSQL's leases on the database's clock). The sql.js adapter is `sqljs/sqljs-adapter.ts`,
 * PostgreSQL's `postgres/pg-scan-queue.ts`; `open-scan-queue.ts` builds the queue over one of them, and nothing above
 * them knows which one it has. The rows both carry are `store-rows.ts`.
 */
export interface StoreAdapter {
  /** Where the queue lives, for logs and messages: the file, or the database URL with its password masked. */
  readonly where: string;
  /**
   * One write: `work` runs against the store's port; resolves with its result once that is durable. Rejects with
   * `StoreUnavailableError` when the store cannot take it (nothing was stored), `WriteAbandonedError` when `signal`
   * aborted before it was taken, or with what `work` threw (nothing of it was stored). `announce` says what the change
   * was, for other instances (PostgreSQL tells them as the transaction commits).
   */
  write<T>(work: (tx: QueueTx) => Promise<T>, options?: WriteOptions<T>): Promise<T>;
  /** Reads of what is stored (never a write still on its way). */
  readonly reads: AsyncRows;
  readonly due: Pick<DispatchQueue, "dueForCheck" | "dueForTarget" | "nextWakeAt" | "pendingCount" | "release">;
  /** Whether a write would be taken right now, and why not; from memory. */
  health(): StoreHealth;
  /** Other instances' changes (PostgreSQL); `listener` is told each one. */
  onOtherInstance?(listener: (event: QueueEvent) => void): void;
  /** Runs at each maintenance tick after the history is pruned (sql.js: folds a quiet journal into the file). */
  maintain?(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Reads that both stores answer: the embedded store's in memory at once, PostgreSQL's over the network. The views
 * (`queue-views.ts`) and the covered check (`coverage.ts`) are written once against this, in SQL both engines read
 * alike (`?` and `?N` placeholders; the PostgreSQL reader numbers them).
 */
export interface AsyncRows {
  all<T>(sql: string, params?: readonly (string | number | null)[]): Promise<T[]>;
  get<T>(sql: string, params?: readonly (string | number | null)[]): Promise<T | undefined>;
}

export interface WriteOptions<T> {
  readonly signal?: AbortSignal;
  readonly announce?: (result: T) => QueueEvent;
}

/** A write that gave up (its sender stopped waiting) before the store took it: it was not stored and never will be. */
export class WriteAbandonedError extends Error {
  override name = "WriteAbandonedError";
}

export interface StoreHealth {
  /** Whether a write would be taken right now. */
  readonly writable: boolean;
  /** Why not, with the fix, in words. */
  readonly problem?: string;
  /** Since when (ms since the epoch). */
  readonly since?: number;
}

/** A stored change as the dispatchers and the console hear of it: new work that may be due in `inMs`, or any change. */
export type QueueEvent = { readonly kind: "work"; readonly inMs: number } | { readonly kind: "change" };
