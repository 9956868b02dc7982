import type { DriveStateStore } from "../drive/drive-store.ts";
import type { DriveStatus } from "../core/drive-status.ts";
import type { DriveMonitor } from "../drive/poller.ts";
import { openPgDriveStore } from "./pg-drive-store.ts";
import { createRoleComponent, type RoleHolding, type RoleLockSettings } from "./role-component.ts";
import { RoleStandbyError } from "./role-names.ts";

/**
 * The Drive monitor of an instance that shares its database with others (`SERVER_DATABASE_URL`): one instance polls
 * Google Drive, the one holding the `drive` role; it makes a fresh monitor each time it takes the role (the page tokens
 * and cache are read again from PostgreSQL) and stops it when it loses the role. It is a `DriveMonitor` itself, so the
 * console, the API and the service use it as they use the monitor: on a standby, `status()` says `standby` and which
 * instance polls, and the commands (`reset_page_token`, `clear_drive_cache`) refuse, naming that instance.
 */
export interface DriveByRoleOptions {
  readonly lock: Omit<RoleLockSettings, "role">;
  /** A new monitor (not started) whose state lives in `openStore`'s store. */
  readonly create: (openStore: () => Promise<DriveStateStore>) => DriveMonitor;
}

export function driveMonitorByRole(options: DriveByRoleOptions): DriveMonitor & RoleHolding {
  const { log, instance } = options.lock;
  const role = createRoleComponent({
    lock: { ...options.lock, role: "drive" },
    create: (held) => {
      const monitor = options.create(() => openPgDriveStore({ connection: held.connection, log }));
      // Resolves after the first poll; the monitor logs its own failures.
      void monitor.start();
      return monitor;
    },
  });
  // Never started: what the configuration says (access, drives, interval), for the status of a standby.
  const idle = options.create(() => Promise.reject(new Error("a standby opens no Google Drive store")));
  const active = (): DriveMonitor => {
    const monitor = role.current();
    if (!monitor) throw new RoleStandbyError("drive", instance, role.holder());
    return monitor;
  };

  return {
    get state() {
      return role.current()?.state ?? "idle";
    },
    status(): DriveStatus {
      const monitor = role.current();
      if (monitor) return monitor.status();
      const base = idle.status();
      if (role.role() === "active") return { ...base, state: "starting" };
      const holder = role.holder();
      return { ...base, state: "standby", ...(holder ? { activeInstance: holder } : {}) };
    },
    start() {
      role.start();
      return Promise.resolve();
    },
    stop: () => role.stop(),
    pollOnce: async () => active().pollOnce(),
    resetPageTokens: async () => active().resetPageTokens(),
    clearCache: async () => active().clearCache(),
    role: () => role.role(),
  };
}
