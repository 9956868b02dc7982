import { open, readdir, rename, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";

/**
 * The file-system steps the queue's durability rests on: write a whole file atomically (temp file, fsync, rename,
 * fsync the folder), and make a new file's name durable. Without the folder fsync a crash can lose a rename or a
 * freshly created file even though its contents were fsync'd.
 */
export async function syncFolder(folder: string): Promise<void> {
  const handle = await open(folder, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

export async function writeFileAtomic(file: string, data: Uint8Array): Promise<void> {
  const temp = `${file}.tmp-${String(process.pid)}`;
  const handle = await open(temp, "w");
  try {
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(temp, file);
  await syncFolder(dirname(file));
}

/** Temp files left by a crash in the middle of `writeFileAtomic`. They never replaced anything: remove them. */
export async function removeStaleTempFiles(file: string): Promise<void> {
  const prefix = `${basename(file)}.tmp-`;
  const names = await readdir(dirname(file)).catch(() => [] as string[]);
  await Promise.all(
    names.filter((name) => name.startsWith(prefix)).map((name) => unlink(join(dirname(file), name)).catch(() => {})),
  );
}
