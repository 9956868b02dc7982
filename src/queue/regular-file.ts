import { stat } from "node:fs/promises";

/**
 * A queue file must be a regular file: opening a FIFO for reading waits for a writer that never comes (and SQLite
 * opens it from the main thread, so not even SIGTERM is heard), and a directory or a device is no queue either. Asked
 * before anything opens `path` (a symbolic link is followed: it may name a file elsewhere).
 *
 * Answers what `path` is instead, in words (`'<path>' is a FIFO (named pipe), not a file`); nothing when it is a
 * regular file, is not there, or cannot be looked at (the open that follows says why).
 */
export async function describeNonRegularFile(path: string): Promise<string | undefined> {
  const stats = await stat(path).catch(() => undefined);
  if (!stats || stats.isFile()) return undefined;
  const what = stats.isFIFO()
    ? "a FIFO (named pipe)"
    : stats.isDirectory()
      ? "a directory"
      : stats.isSocket()
        ? "a socket"
        : stats.isCharacterDevice() || stats.isBlockDevice()
          ? "a device"
          : "a special file";
  return `'${path}' is ${what}, not a file`;
}
