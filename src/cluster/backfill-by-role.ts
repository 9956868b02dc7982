import type { Backfill, RunOptions, RunSummary } from "../backfill/backfill.ts";
import type { BackfillAppStatus } from "../core/backfill-status.ts";
import type { CursorStore } from "../backfill/cursor-store.ts";
import { openPgCursorStore } from "./pg-cursor-store.ts";
import { createRoleComponent, type RoleHolding, type RoleLockSettings } from "./role-component.ts";
import { RoleStandbyError } from "./role-names.ts";

/**
 * The backfill of an instance that shares its database with others (`SERVER_DATABASE_URL`): the instance holding the
 * `backfill` role reads the *arr history, with a fresh backfill each time it takes the role (the cursors are read
 * again from PostgreSQL), stopped when it loses it. On a standby, `status()` shows each app as `standby` with the
 * instance that reads, and `run()` (`cmd=backfill`, `autoscan backfill`) refuses, naming that instance.
 */
export interface BackfillByRoleOptions {
  readonly lock: Omit<RoleLockSettings, "role">;
  /** The apps with `BACKFILL` on (for a standby's status). */
  readonly apps: readonly string[];
  /** A new backfill (not started) on these cursors. */
  readonly create: (cursors: CursorStore) => Promise<Backfill>;
}

export function backfillByRole(options: BackfillByRoleOptions): Backfill & RoleHolding {
  const { log, instance } = options.lock;
  const role = createRoleComponent({
    lock: { ...options.lock, role: "backfill" },
    create: async (held) => {
      const backfill = await options.create(await openPgCursorStore({ connection: held.connection, log }));
      backfill.start();
      return backfill;
    },
  });
  return {
    start: () => role.start(),
    stop: () => role.stop(),
    async run(runOptions?: RunOptions): Promise<RunSummary[]> {
      const backfill = role.current();
      if (!backfill) throw new RoleStandbyError("backfill", instance, role.holder());
      return backfill.run(runOptions);
    },
    status(): BackfillAppStatus[] {
      const backfill = role.current();
      if (backfill) return backfill.status();
      const holder = role.holder();
      const state = role.role() === "active" ? ("waiting" as const) : ("standby" as const);
      return options.apps.map((name) => ({ name, state, ...(state === "standby" && holder ? { activeInstance: holder } : {}) }));
    },
    role: () => role.role(),
  };
}
