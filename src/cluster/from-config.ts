import { backfillByRole } from "./backfill-by-role.ts";
import { driveMonitorByRole } from "./drive-by-role.ts";
import type { RoleHolding } from "./role-component.ts";
import { join } from "node:path";
import type { Backfill } from "../backfill/backfill.ts";
import { openCursorStore, type CursorStore } from "../backfill/cursor-store.ts";
import type { Logger } from "../core/logger.ts";
import type { DriveMonitor } from "../drive/poller.ts";
import { adoptDriveFile } from "./adopt-drive-file.ts";
import { createBackfillFromConfig, type BackfillInput } from "../backfill/from-config.ts";
import { driveMonitorFactoryFromConfig, type DriveInput } from "../drive/from-config.ts";

/**
 * `SERVER_DATABASE_URL`: instances share one database, and one of them polls Google Drive and one reads the *arr
 * history (src/cluster). The Drive monitor and the backfill are made as without a database, wrapped so that they run
 * only while this instance holds their role; a standby tries to take it every poll interval (at most a minute).
 * Loaded only when a database is set (it brings the PostgreSQL driver).
 */
export interface SharedDatabase {
  readonly url: string;
  /** This instance's id. */
  readonly instance: string;
}

/** `undefined` when `CLOUD.ENABLED` is off. */
export function driveByRoleFromConfig(input: DriveInput, database: SharedDatabase): (DriveMonitor & RoleHolding) | undefined {
  const factory = driveMonitorFactoryFromConfig(input);
  if (!factory) return undefined;
  const log = input.log.child({ component: "GOOGLE" });
  return driveMonitorByRole({
    lock: { url: database.url, instance: database.instance, log, retryMs: input.config.CLOUD.POLL_INTERVAL * 1000 },
    // The shared store, and once, the page tokens of this instance's own cache file (a switch to PostgreSQL).
    create: (openStore) =>
      factory(async () => {
        const store = await openStore();
        await adoptDriveFile(store, input.settings.cacheFile, log);
        return store;
      }),
  });
}

/** `undefined` when no app under `ARR` has `BACKFILL` on. */
export function backfillByRoleFromConfig(input: BackfillInput, database: SharedDatabase): (Backfill & RoleHolding) | undefined {
  const apps = Object.keys(input.config.ARR).filter((name) => input.config.ARR[name]?.BACKFILL);
  if (apps.length === 0) return undefined;
  return backfillByRole({
    lock: {
      url: database.url,
      instance: database.instance,
      log: input.log.child({ component: "BACKFILL" }),
      retryMs: input.config.SERVER_BACKFILL_INTERVAL * 1000,
    },
    apps,
    create: async (cursors) => {
      await adoptFileCursors(cursors, join(input.dataDir, "backfill.json"), apps, input.log);
      const backfill = await createBackfillFromConfig({ ...input, cursors });
      if (!backfill) throw new Error("no *arr app has BACKFILL on");
      return backfill;
    },
  });
}

/**
 * An instance switched to PostgreSQL keeps reading each app's history where its own `backfill.json` had got to: an
 * app with no cursor in the database yet takes the file's (once; from then on the database's moves on).
 */
export async function adoptFileCursors(cursors: CursorStore, file: string, apps: readonly string[], log: Logger): Promise<void> {
  const missing = apps.filter((app) => cursors.get(app) === undefined);
  if (missing.length === 0) return;
  const old = await openCursorStore(file, log).catch(() => undefined);
  for (const app of missing) {
    const cursor = old?.get(app);
    if (!cursor) continue;
    await cursors.set(app, cursor);
    log.info({ app, file }, `Backfill of '${app}' goes on from '${file}' (read up to ${new Date(cursor.date).toISOString()}).`);
  }
}
