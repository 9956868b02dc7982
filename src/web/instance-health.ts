/**
 * What `/health` says about this instance beside the queue: which store it uses, its id (when instances share a
 * database), and whether it does the jobs only one instance does — `active`, `standby` (another instance does it), or
 * `off` (not configured). From memory: a health check never waits on the database for this.
 */
export type RoleView = "active" | "standby" | "off";

export interface InstanceHealth {
  readonly store: "sqlite" | "postgresql";
  readonly instance?: string;
  readonly roles: { readonly drive: RoleView; readonly backfill: RoleView };
}

export interface InstanceHealthInput {
  /** True when `SERVER_DATABASE_URL` is set. */
  readonly database: boolean;
  readonly instance: string;
  readonly drive: object | undefined;
  readonly backfill: object | undefined;
}

export function instanceHealth(input: InstanceHealthInput): () => InstanceHealth {
  // A component that runs only while this instance holds its role (src/cluster) has `role()`; any other always runs.
  const view = (component: object | undefined): RoleView => {
    if (component === undefined) return "off";
    return "role" in component && typeof component.role === "function" ? (component.role() as "active" | "standby") : "active";
  };
  return () => ({
    store: input.database ? "postgresql" : "sqlite",
    ...(input.database ? { instance: input.instance } : {}),
    roles: { drive: view(input.drive), backfill: view(input.backfill) },
  });
}
