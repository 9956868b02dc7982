import { createRoleLock, type HeldRole, type RoleLockOptions, type RoleState } from "./role-lock.ts";

/**
 * A component (the Drive monitor, the backfill) that runs only while this instance holds its role: made and started
 * afresh each time the role is taken (what it keeps is read again: another instance may have moved it meanwhile), and
 * stopped when the role is lost or the service stops.
 */
export interface Stoppable {
  stop(): Promise<void>;
}

export type RoleLockSettings = Omit<RoleLockOptions, "onAcquired" | "onLost">;

/** What a role-bound component adds to the interface it wraps (`/health` reads it). */
export interface RoleHolding {
  /** Whether this instance holds the role now. */
  role(): RoleState;
}

export interface RoleComponentOptions<T extends Stoppable> {
  readonly lock: RoleLockSettings;
  /** Makes and starts the component for one tenure of the role. */
  readonly create: (held: HeldRole) => Promise<T> | T;
}

export interface RoleComponent<T> {
  start(): void;
  stop(): Promise<void>;
  /** The component while this instance holds the role and it is running. */
  current(): T | undefined;
  role(): RoleState;
  /** The instance holding the role, as last seen (from memory). */
  holder(): string | undefined;
}

export function createRoleComponent<T extends Stoppable>(options: RoleComponentOptions<T>): RoleComponent<T> {
  let current: T | undefined;
  const lock = createRoleLock({
    ...options.lock,
    onAcquired: async (held) => {
      current = await options.create(held);
    },
    onLost: async () => {
      const running = current;
      current = undefined;
      await running?.stop();
    },
  });
  return {
    start: () => lock.start(),
    stop: () => lock.stop(),
    current: () => current,
    role: () => lock.state(),
    holder: () => lock.lastHolder(),
  };
}
