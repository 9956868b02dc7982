import { readFile } from "node:fs/promises";

/**
 * Which filesystem a watched folder is on, from `/proc/self/mountinfo` (never a stat: it could hang on that very
 * mount), and whether that filesystem tells of changes made by others. FUSE (rclone, mergerfs), NFS, SMB/CIFS and
 * 9p send the kernel's change notifications for what this machine writes at most: a file put there by another machine
 * or by the cloud never raises one, so `events` mode would miss it and `poll` is the mode for them.
 */
export interface MountType {
  readonly mountPoint: string;
  readonly type: string;
  /** True for FUSE, NFS, SMB/CIFS, 9p and other network filesystems. */
  readonly eventLess: boolean;
}

const EVENT_LESS = /^(fuse(\..*)?|fuseblk|nfs4?|cifs|smb3?|smbfs|9p|sshfs|afs|ceph|glusterfs|davfs|virtiofs)$/;

export async function mountTypeOf(path: string, mountInfoFile = "/proc/self/mountinfo"): Promise<MountType | undefined> {
  const mounts = await readMountInfo(mountInfoFile);
  if (mounts === undefined) return undefined;
  let best: { mountPoint: string; type: string } | undefined;
  for (const { mountPoint, type } of mounts) {
    const holds = mountPoint === "/" || path === mountPoint || path.startsWith(`${mountPoint}/`);
    if (holds && (!best || mountPoint.length >= best.mountPoint.length)) best = { mountPoint, type };
  }
  return best ? { ...best, eventLess: EVENT_LESS.test(best.type) } : undefined;
}

/**
 * The mount points below the watched paths (not the paths themselves), from the mount table: the kernel's
 * notifications say nothing of a filesystem mounted or unmounted there, so the watcher looks at these folders itself.
 * Undefined without a mount table (not Linux).
 */
export type MountsUnder = (paths: readonly string[]) => Promise<readonly string[] | undefined>;

export function mountsUnderWith(mountInfoFile = "/proc/self/mountinfo"): MountsUnder {
  return async (paths) => {
    const mounts = await readMountInfo(mountInfoFile);
    if (mounts === undefined) return undefined;
    const under = mounts.map((mount) => mount.mountPoint).filter((point) => paths.some((path) => point !== path && point.startsWith(path === "/" ? "/" : `${path}/`)));
    return [...new Set(under)];
  };
}

/** Each line of the mount table: the mount point (field 5) and the filesystem type (after "-"). */
async function readMountInfo(file: string): Promise<{ mountPoint: string; type: string }[] | undefined> {
  const text = await readFile(file, "utf8").catch(() => undefined);
  if (text === undefined) return undefined;
  return text.split("\n").flatMap((line) => {
    const fields = line.split(" ");
    const dash = fields.indexOf("-");
    const mountPoint = unescape(fields[4] ?? "");
    const type = fields[dash + 1];
    return dash < 0 || !type || !mountPoint ? [] : [{ mountPoint, type }];
  });
}

/** `fs.inotify.max_user_watches`: folders one user may watch (each watcher in `events` mode needs one per folder). */
export async function inotifyWatchLimit(file = "/proc/sys/fs/inotify/max_user_watches"): Promise<number | undefined> {
  const text = await readFile(file, "utf8").catch(() => undefined);
  const limit = Number(text?.trim());
  return Number.isFinite(limit) && limit > 0 ? limit : undefined;
}

/** mountinfo writes space, tab, newline and backslash as octal escapes. */
const unescape = (text: string): string => text.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));
