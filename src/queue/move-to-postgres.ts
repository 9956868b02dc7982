import { access, rename } from "node:fs/promises";
import type { Logger } from "../core/logger.ts";
import type { ScanRequest } from "../core/scan.ts";
import type { ScanQueue } from "./scan-queue.ts";

/**
 * Switching an instance to PostgreSQL must not drop the folders its queue file still holds: at the first start with
 * `SERVER_DATABASE_URL`, the waiting folders of `<data dir>/queue.db` are queued again in PostgreSQL (each request as
 * it was received), then the file is renamed `queue.db.moved-to-postgresql`, so it happens once. The history stays in
 * the renamed file (it is not moved: the console starts a fresh one). plex_autoscan's queue found there was set aside
 * before (`plex-autoscan-import.ts`): `open` opens autoscan's own file, without a lock (the instance holds it).
 */
export const MOVED_SUFFIX = ".moved-to-postgresql";

export async function moveQueueFileInto(target: ScanQueue, file: string, open: (file: string) => Promise<ScanQueue>, log: Logger): Promise<number> {
  if (!(await exists(file))) return 0;
  const old = await open(file);
  let moved = 0;
  try {
    for (let offset = 0; ; offset += PAGE) {
      const page = await old.listPending({ limit: PAGE, offset });
      const requests: ScanRequest[] = page.flatMap((item) =>
        item.requests.map((r) => ({
          path: r.path,
          kind: r.kind,
          source: r.source,
          event: r.event,
          ...(r.deleted ? { deleted: true } : {}),
          ...(r.receivedPath === undefined ? {} : { receivedPath: r.receivedPath }),
          // The folder's refresh in place goes with it (stored on the folder, not on each request).
          ...(item.refresh ? { refresh: item.refresh } : {}),
        })),
      );
      if (requests.length > 0) await target.enqueue(requests);
      moved += page.length;
      if (page.length < PAGE) break;
    }
  } finally {
    await old.close();
  }
  // Only once they are stored in PostgreSQL: a failure above leaves the file for the next start.
  for (const suffix of ["", ".prev"]) {
    if (await exists(file + suffix)) await rename(file + suffix, file + suffix + MOVED_SUFFIX);
  }
  if (moved > 0) {
    log.info(
      { file, folders: moved },
      `Moved ${String(moved)} waiting folder(s) from '${file}' into PostgreSQL; the file is kept as '${file}${MOVED_SUFFIX}'.`,
    );
  }
  return moved;
}

const PAGE = 1000;

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}
