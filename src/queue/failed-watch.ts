import type { QueueTx } from "./rules/queue-tx.ts";
import type { ItemRow } from "./store-rows.ts";

/**
 * A folder this write finished as `failed`: its file never appeared, a server's delivery was given up, its attempts
 * kept crashing the process, or no server could scan it at all (refused at intake). For whoever tells people about it
 * (`NOTIFY`'s `failed` event); the queue says it once the write is durable.
 */
export interface FailedFolder {
  readonly id: number;
  /** The folder as History shows it: the one scanned once the checks passed, else the one requested. */
  readonly folder: string;
  /** History's reason (`plex: Plex answered 500`, `File was not found after 10 check(s) …`, `Not queued: …`). */
  readonly reason: string;
  /** The servers whose delivery was given up (none when the folder never reached one). */
  readonly targets: readonly string[];
}

/**
 * The store port of one write, seeing which items it stores as failed. Every rule that fails an item read it waiting
 * first (`storeItem` after a check, an attempt or the last delivery, or a waiting folder refused at intake), so an item
 * stored as failed here finished now. A write may run again (PostgreSQL retries a deadlock victim): `found` is keyed by
 * the item, and the caller clears it before each run. The adapters' transactions are plain objects, so spreading one
 * keeps every method.
 */
export function watchFailures(tx: QueueTx, found: Map<number, FailedFolder>): QueueTx {
  return {
    ...tx,
    async insertItem(row) {
      const item = await tx.insertItem(row);
      if (item.state === "failed") found.set(item.id, failedFolder(item, []));
      return item;
    },
    async updateItem(row) {
      await tx.updateItem(row);
      if (row.state !== "failed") return;
      const givenUp = (await tx.deliveries(row.id)).filter((delivery) => delivery.failed === 1).map((delivery) => delivery.target);
      found.set(row.id, failedFolder(row, givenUp));
    },
  };
}

function failedFolder(row: ItemRow, targets: readonly string[]): FailedFolder {
  return { id: row.id, folder: row.scan_folder ?? row.folder, reason: row.last_error ?? "", targets };
}
