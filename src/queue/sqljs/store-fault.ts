import { describeError } from "../../core/errors.ts";

/** What went wrong writing in `dir`, and what the user can do about it, in words. */
export function describeStoreFault(error: unknown, dir: string): string {
  const code = findCode(error);
  switch (code) {
    case "ENOSPC":
      return `disk full on ${dir}: free some space there`;
    case "EDQUOT":
      return `disk quota exceeded on ${dir}: raise the quota or free some space`;
    case "EFBIG":
      return `file size limit reached in ${dir} (ulimit -f): raise the limit`;
    case "EROFS":
      return `${dir} is on a read-only filesystem: mount it read-write`;
    case "EACCES":
    case "EPERM":
      return `${dir} is not writable by this user (uid ${String(process.getuid?.() ?? "?")}): fix its owner or permissions (PUID/PGID in Docker)`;
    case "ENOENT":
      return `${dir} or a file in it was removed while autoscan was running`;
    case "EIO":
      return `the disk under ${dir} reported an I/O error: check the disk and the mount`;
    default:
      return describeError(error);
  }
}

/** The disk refuses writes as such (full, quota, size limit, read-only, failing), not this one write for a reason of its own. */
export function isDiskRefusal(error: unknown): boolean {
  return ["ENOSPC", "EDQUOT", "EFBIG", "EROFS", "EIO"].includes(findCode(error) ?? "");
}

function findCode(error: unknown): string | undefined {
  for (let e = error; e instanceof Error; e = e.cause) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code) return code;
  }
  return undefined;
}
