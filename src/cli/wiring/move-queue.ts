import { access, rename } from "node:fs/promises";
import type { Clock } from "../../core/clock.ts";
import type { Logger } from "../../core/logger.ts";
import type { ScanRequest } from "../../core/scan.ts";
import { openPlexAutoscanQueue, type PlexAutoscanQueue } from "../../queue/plex-autoscan-file.ts";
import { describeDamage, importPlexAutoscanQueue, type ImportSummary } from "../../queue/plex-autoscan-import.ts";
import { type ScanQueue } from "../../queue/scan-queue.ts";
import { createScanQueue } from "../../queue/sqljs/sqljs-adapter.ts";

/**
 * Switching an instance to PostgreSQL must not drop the folders its queue file still holds: at the first start with
 * `SERVER_DATABASE_URL`, the waiting folders of `<data dir>/queue.db` are queued again in PostgreSQL (each request as
 * it was received), then the file is renamed `queue.db.moved-to-postgresql`, so it happens once. The history stays in
 * the renamed file (it is not moved: the console starts a fresh one).
 */
export const MOVED_SUFFIX = ".moved-to-postgresql";

export async function moveQueueFileInto(target: ScanQueue, file: string, clock: Clock, log: Logger): Promise<number> {
  if (!(await exists(file))) return 0;
  const legacy = await openPlexAutoscanQueue(file);
  // Anything else is autoscan's own queue file, opened below (a FIFO or a directory is refused there, in words).
  if (legacy.kind === "queue") return importIntoDatabase(target, legacy.queue, file, log);
  // The data dir is locked by this instance already (the PostgreSQL queue took the lock).
  const old = await createScanQueue({ file, clock, log, scanDelayMs: 0, lock: false, historyMaxRows: 1_000_000, historyMaxDays: 3650 });
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

/**
 * plex_autoscan's queue where the queue file goes, on an instance that uses PostgreSQL: imported straight into the
 * database (the same import as a first start with the embedded queue), then set aside as `.plex_autoscan.bak`. A
 * start that stops half-way imports it again: what is stored merges.
 */
async function importIntoDatabase(target: ScanQueue, legacy: PlexAutoscanQueue, file: string, log: Logger): Promise<number> {
  let summary: ImportSummary;
  try {
    summary = await importPlexAutoscanQueue({ source: legacy, store: target.importRequests });
  } finally {
    legacy.close();
  }
  const backup = `${file}.plex_autoscan.bak`;
  await rename(file, backup);
  const requests = summary.queued + summary.merged;
  log[summary.unreadable.length > 0 ? "warn" : "info"](
    { file, backup, ...summary },
    `Imported ${String(requests)} scan request(s) from the plex_autoscan queue in '${file}' into PostgreSQL (the old ` +
      `file is kept as '${backup}'): ${String(summary.queued)} queued, ${String(summary.merged)} merged into a waiting folder` +
      `${summary.skipped > 0 ? `, ${String(summary.skipped)} skipped (not a full path)` : ""}.${describeDamage(summary)}`,
  );
  return requests;
}

const PAGE = 1000;

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}
