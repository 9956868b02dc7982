import { randomBytes } from "node:crypto";
import { copyFile, mkdir, open, readdir, rename, rm, stat } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import type { Logger } from "./logger.ts";

/**
 * The one way autoscan replaces a file on disk (config, tokens, queue snapshots, the drive cache), so that a crash or
 * power loss leaves either the old file or the new one, never a torn mix:
 *
 * 1. write a temporary file beside it (`.<name>.<random>.tmp`, created exclusively, with its final mode);
 * 2. fsync it; 3. rename it over the old one; 4. fsync the folder, so that the rename itself is on disk.
 *
 * Some filesystems refuse an fsync on a folder (SMB, some FUSE mounts, Windows: EPERM, EINVAL, EISDIR, ENOTSUP). The
 * rename is still atomic there, only its durability across a power cut is up to the filesystem: that refusal is
 * tolerated and logged once per folder. Every other error is thrown, the temporary file is removed, and every handle
 * is closed on every path.
 */
export interface DurableWriteOptions {
  /** Exact permission bits of the new file (tokens: 0o600). Default: the old file's, or 0o666 less the umask. */
  readonly mode?: number;
  /** Where a refused folder fsync is reported (once per folder). */
  readonly log?: Logger;
}

export async function writeFileDurably(
  path: string,
  /** The content, or its pieces in order (a large file written without one copy of it in memory). */
  data: string | Uint8Array | Iterable<string>,
  options: DurableWriteOptions = {},
): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const mode = options.mode ?? (await stat(path).then((s) => s.mode & 0o777, () => undefined));
  await replaceThroughTemp(path, options.log, async (temp) => {
    const handle = await open(temp, "wx", mode ?? 0o666);
    try {
      await handle.writeFile(data);
      // The umask may have narrowed the mode at creation; an explicit or inherited mode is made exact.
      if (mode !== undefined) await handle.chmod(mode);
      await handle.sync();
    } finally {
      await handle.close();
    }
  });
}

/**
 * Copies `from` over `to` with the same guarantees as `writeFileDurably` (a crash leaves the old `to` or the whole
 * copy), without reading the file into memory. Throws ENOENT when `from` does not exist.
 */
export async function copyFileDurably(from: string, to: string, options: DurableWriteOptions = {}): Promise<void> {
  await replaceThroughTemp(to, options.log, async (temp) => {
    await copyFile(from, temp);
    const handle = await open(temp, "r+");
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  });
}

/** Steps 1 to 4 around `fill`, which writes and fsyncs the temporary file; it is removed if anything fails. */
async function replaceThroughTemp(path: string, log: Logger | undefined, fill: (temp: string) => Promise<void>): Promise<void> {
  const dir = dirname(path);
  const temp = join(dir, `.${basename(path)}.${randomBytes(4).toString("hex")}.tmp`);
  try {
    await fill(temp);
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true }).catch(() => {});
    throw error;
  }
  await syncFolder(dir, log);
}

/** The errors a filesystem gives when it cannot fsync a folder at all (not a failure of this write). */
const FOLDER_SYNC_UNSUPPORTED = new Set(["EPERM", "EINVAL", "EISDIR", "ENOTSUP", "EOPNOTSUPP", "EBADF", "EACCES"]);
const warnedFolders = new Set<string>();

/**
 * Makes a rename or a new file's name in `dir` durable. A filesystem that cannot fsync folders is tolerated (see
 * above); any other failure (EIO, ENOENT …) is thrown.
 */
export async function syncFolder(dir: string, log?: Logger): Promise<void> {
  let handle;
  try {
    handle = await open(dir, "r");
    await handle.sync();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "";
    if (!FOLDER_SYNC_UNSUPPORTED.has(code)) throw error;
    // Said once per folder, by the first caller that has a log (a silent caller, such as doctor's probe, does not
    // use up the warning).
    if (log && !warnedFolders.has(dir)) {
      warnedFolders.add(dir);
      log.warn(
        { folder: dir, code },
        `The filesystem of '${dir}' does not support fsync on a folder (${code}); renames there rely on the filesystem's own ordering`,
      );
    }
  } finally {
    await handle?.close().catch(() => {});
  }
}

/** Temporary files left beside `path` by a crash in the middle of `writeFileDurably`: they never replaced anything. */
export async function removeStaleTempFiles(path: string): Promise<void> {
  const dir = dirname(path);
  const prefix = `.${basename(path)}.`;
  const names = await readdir(dir).catch(() => [] as string[]);
  const stale = names.filter((name) => name.startsWith(prefix) && /^[0-9a-f]{8}\.tmp$/.test(name.slice(prefix.length)));
  await Promise.all(stale.map((name) => rm(join(dir, name), { force: true }).catch(() => {})));
}
