import { open, rename, stat } from "node:fs/promises";
import { dirname, basename, join } from "node:path";

/** Writes a file so that a crash leaves either the old or the new content: temp file, fsync, rename, fsync dir. */
export async function writeFileAtomic(path: string, content: string): Promise<void> {
  const mode = await stat(path).then((s) => s.mode & 0o777, () => 0o600);
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
  const handle = await open(temp, "w", mode);
  try {
    await handle.writeFile(content);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(temp, path);
  const dir = await open(dirname(path), "r");
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
}
