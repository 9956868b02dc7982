import type { RoleName } from "../queue/postgres/locks.ts";

/** An application_name longer than this is cut by PostgreSQL (NAMEDATALEN - 1). */
const MAX_APPLICATION_NAME = 63;

/** What each role is, in the words of the log lines ("This instance now polls Google Drive"). */
export const ROLE_WORDS: Readonly<Record<RoleName, string>> = {
  drive: "polls Google Drive",
  backfill: "reads the *arr history",
};

/** Thrown by a role's commands on an instance that does not hold it. */
export class RoleStandbyError extends Error {
  constructor(role: RoleName, instance: string, holder: string | undefined) {
    const who = holder ? `Instance ${holder} ${ROLE_WORDS[role]}` : `Another instance ${ROLE_WORDS[role]}`;
    super(`${who}; this instance (${instance}) stands by. Send the command to that instance (behind a load balancer: run it again until it reaches it).`);
    this.name = "RoleStandbyError";
  }
}

/** `autoscan <instance> <role>`; without the role when that would be too long (the role is in the lock's key anyway). */
export function applicationName(instance: string, role: RoleName): string {
  const full = `autoscan ${instance} ${role}`;
  return full.length <= MAX_APPLICATION_NAME ? full : `autoscan ${instance}`.slice(0, MAX_APPLICATION_NAME);
}

/** `autoscan <instance> [role]` → the instance; any other name is shown as it is. */
export function instanceOf(applicationNameText: string): string {
  const match = /^autoscan (\S+)(?: (?:drive|backfill))?$/.exec(applicationNameText);
  return match?.[1] ?? applicationNameText;
}
