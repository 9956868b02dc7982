import { access, rename } from "node:fs/promises";
import type { Logger } from "../core/logger.ts";
import { openDriveStateStore, type DriveStateStore } from "../drive/drive-store.ts";

/**
 * An instance switched to PostgreSQL keeps polling Google Drive where its own `cache.db` had got to: when the shared
 * store has no page token yet, the file's page tokens, path cache and facts are copied in (one commit), and the file is
 * renamed `cache.db.moved-to-postgresql`, so a later `reset_page_token` never brings its old tokens back.
 */
export const MOVED_DRIVE_SUFFIX = ".moved-to-postgresql";

export async function adoptDriveFile(shared: DriveStateStore, file: string, log: Logger): Promise<boolean> {
  if (Object.keys(shared.pageTokens()).length > 0) return false;
  if (!(await access(file).then(() => true, () => false))) return false;
  const old = await openDriveStateStore({ path: file, log });
  try {
    const tokens = old.pageTokens();
    if (Object.keys(tokens).length === 0) return false;
    const entries = old.entries();
    await shared.commit({ diff: { upserts: new Map(entries), removals: new Set() }, pageTokens: tokens, meta: old.metas() });
    log.info(
      { file, feeds: Object.keys(tokens).length, cached: entries.length },
      `Google Drive monitoring goes on from '${file}' (its page tokens and ${String(entries.length)} cached names are now in PostgreSQL).`,
    );
  } finally {
    old.close();
  }
  await rename(file, file + MOVED_DRIVE_SUFFIX);
  return true;
}
