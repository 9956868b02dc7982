import { statSync } from "node:fs";
import { dirname } from "node:path";

/** The user and group this process runs as. */
export interface ProcessUser {
  readonly uid: number;
  readonly gid: number;
}

const REASONS: Readonly<Record<string, string>> = {
  EACCES: "permission denied",
  EPERM: "not permitted",
  EROFS: "read-only file system",
};

/**
 * What to print when a command stops because the system refused it a file (Node's EACCES/EPERM/EROFS with a path):
 * which uid:gid autoscan runs as, which uid:gid owns the place, and how to fix it — the usual first-start problem of a
 * container whose /config belongs to someone else. Undefined for any other error.
 */
export function describeAccessDenied(error: unknown, user: ProcessUser | undefined = currentUser()): string | undefined {
  const { code, path, syscall } = (error ?? {}) as { code?: unknown; path?: unknown; syscall?: unknown };
  if (typeof code !== "string" || typeof path !== "string" || !(code in REASONS) || user === undefined) return undefined;
  const reason = REASONS[code] as string;
  // The file may not exist yet (refused in its folder): then the folder's owner is the one that matters.
  const owned = ownerOf(path) ?? ownerOf(dirname(path));
  const verb = typeof syscall === "string" && syscall !== "open" ? syscall : owned?.path === path ? "use" : "create";
  const lines = [`cannot ${verb} ${path}: ${reason}.`];
  if (code === "EROFS") {
    lines.push(`  Fix: make ${dirname(path)} writable (in Docker: no :ro on the /config volume).`);
    return lines.join("\n");
  }
  const runsAs = `autoscan runs as uid ${String(user.uid)}, gid ${String(user.gid)}`;
  if (owned === undefined) {
    lines.push(`  ${runsAs}.`);
  } else {
    lines.push(`  ${runsAs}; ${owned.path} belongs to uid ${String(owned.uid)}, gid ${String(owned.gid)} (mode ${owned.mode}).`);
  }
  const target = owned?.path ?? dirname(path);
  const asOwner =
    owned !== undefined && owned.uid !== 0
      ? `, or run autoscan as ${String(owned.uid)}:${String(owned.gid)} (Docker: PUID/PGID or --user; systemd: User=)`
      : "";
  lines.push(`  Fix: sudo chown ${String(user.uid)}:${String(user.gid)} ${target} (in Docker: on the host side of the mount)${asOwner}.`);
  return lines.join("\n");
}

function currentUser(): ProcessUser | undefined {
  if (typeof process.getuid !== "function" || typeof process.getgid !== "function") return undefined;
  return { uid: process.getuid(), gid: process.getgid() };
}

function ownerOf(path: string): { path: string; uid: number; gid: number; mode: string } | undefined {
  try {
    const stats = statSync(path);
    return { path, uid: stats.uid, gid: stats.gid, mode: (stats.mode & 0o7777).toString(8) };
  } catch {
    return undefined;
  }
}
