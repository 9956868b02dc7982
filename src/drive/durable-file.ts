import { randomBytes } from "node:crypto";
import { mkdir, open, rename, rm } from "node:fs/promises";
import { basename, dirname, join } from "node:path";

/**
 * Replaces `path` with `data` so that a crash or power loss leaves either the old file or the new one, never a torn
 * mix: write a temporary file beside it, fsync it, rename it over the old one, fsync the folder (the rename itself
 * must reach the disk too). `mode` applies from creation, so a token file is never readable by others, not even
 * for an instant.
 */
export async function writeFileDurably(path: string, data: string | Uint8Array, mode = 0o600): Promise<void> {
  const dir = dirname(path);
  await mkdir(dir, { recursive: true });
  const temp = join(dir, `.${basename(path)}.${randomBytes(4).toString("hex")}.tmp`);
  try {
    const handle = await open(temp, "wx", mode);
    try {
      await handle.writeFile(data);
      await handle.chmod(mode); // the umask may have narrowed or widened nothing; make it exact.
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
  await syncFolder(dir);
}

async function syncFolder(dir: string): Promise<void> {
  try {
    const handle = await open(dir, "r");
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // Some filesystems (and Windows) refuse fsync on a folder; the rename is still atomic there.
  }
}
