import type { QueueTx } from "./queue-tx.ts";
import type { ItemRow } from "../store-rows.ts";

/**
 * The one lock order of the queue's writes: folder locks first, then the items' rows, as a request takes them
 * (`enqueueRequests`). A write that starts from an item (a retry, a file check moving it to its file's folder) reads it
 * unlocked to learn its folder, takes that folder's lock with `others` in one call (one sorted order), and only then
 * reads the item locked. The other way round, a request for the same folder at the same moment holds the folder and
 * waits for the item while this write holds the item and waits for the folder: PostgreSQL aborts one of the two.
 *
 * Answers the item, locked; nothing when it is gone, or moved to another folder in between (its lock is not held then).
 */
export async function lockItemWithFolders(tx: QueueTx, id: number, others: readonly string[] = []): Promise<ItemRow | undefined> {
  const peek = await tx.peekItem(id);
  if (!peek) return undefined;
  await tx.lockFolders([peek.folder, ...others]);
  const item = await tx.item(id);
  return item?.folder === peek.folder ? item : undefined;
}
