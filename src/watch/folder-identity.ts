import { lstat, opendir, stat } from "node:fs/promises";

/**
 * What a folder is, by device and inode (and birth time), asked right after the disk probe listed it (its mount has just answered, so
 * this look does not hang on it). Two paths with the same identity are one folder: a symbolic link or a bind mount
 * leading back into the tree, a loop a walk must not follow. A folder whose identity changed was replaced: deleted and
 * made again, or a filesystem mounted or unmounted on it, and the kernel's notifications on the old one say nothing
 * of the new one.
 *
 * The probe answers "missing" for a folder it cannot list, whatever the reason; here a folder that is there but cannot
 * be read is told apart, with the error (EACCES), so the watcher keeps what it knew instead of reporting it deleted.
 */
export type FolderIdentity =
  | { readonly kind: "folder"; readonly id: string }
  /** A symbolic link (never followed below a watched path: out of the tree, or back into it). */
  | { readonly kind: "link" }
  | { readonly kind: "missing" }
  | { readonly kind: "unreadable"; readonly code: string };

/** `root`: a watched path itself (a link there is followed); `listed`: whether the probe could list it. */
export type IdentifyFolder = (dir: string, options: { readonly root: boolean; readonly listed: boolean }) => Promise<FolderIdentity>;

export const identifyFolder: IdentifyFolder = async (dir, { root, listed }) => {
  let info: Awaited<ReturnType<typeof stat>>;
  try {
    info = root ? await stat(dir) : await lstat(dir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "unknown";
    return code === "ENOENT" || code === "ENOTDIR" ? { kind: "missing" } : { kind: "unreadable", code };
  }
  if (info.isSymbolicLink()) return { kind: "link" };
  if (!info.isDirectory()) return { kind: "missing" };
  if (!listed) return { kind: "unreadable", code: await openError(dir) };
  // With its birth time where the filesystem keeps one: a folder deleted and made again often gets the same inode.
  return { kind: "folder", id: `${String(info.dev)}:${String(info.ino)}:${String(info.birthtimeMs)}` };
};

/** Why a folder that is there cannot be listed: the error of opening it (nothing is read from it). */
async function openError(dir: string): Promise<string> {
  try {
    await (await opendir(dir)).close();
    // It opens now: the listing raced a change of its permissions; it is looked at again.
    return "unknown";
  } catch (error) {
    return (error as NodeJS.ErrnoException).code ?? "unknown";
  }
}
