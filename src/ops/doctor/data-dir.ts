import { randomBytes } from "node:crypto";
import { access, constants, rm, stat, statfs } from "node:fs/promises";
import { dirname, join } from "node:path";
import { writeFileDurably } from "../../core/durable-file.ts";
import type { DiskEntry } from "../../paths/disk-probe.ts";
import { fail, ok, skip, warn, type CheckResult } from "./check.ts";

/**
 * The data directory (queue, tokens, drive cache, lock): it must take a write the way autoscan writes (a file written,
 * fsynced and renamed into place: core/durable-file.ts), and have room. The probe file is removed afterwards.
 */
const MIN_FREE_BYTES = 100 * 1024 * 1024;
const TITLE = "Data directory";
/** The user autoscan runs as (none on Windows), for the messages and the fixes. */
const UID = process.getuid?.();
const GID = process.getgid?.();
const AS_USER = UID === undefined ? "" : ` by uid ${UID}`;

/** `look`: the disk probe's, bounded in time: a data directory on a mount that hangs must not hang the doctor. */
export async function dataDirChecks(dir: string, look: (path: string) => Promise<DiskEntry>): Promise<CheckResult[]> {
  if ((await look(dir)) === "unanswered") {
    return [
      fail("data-dir", TITLE, `The disk under '${dir}' does not answer (a hung network mount?).`, "Fix that mount, or move the data directory to a local disk (--data-dir)."),
      skip("data-dir.space", "Free space", "The data directory's disk does not answer."),
    ];
  }
  const info = await stat(dir).catch((error: NodeJS.ErrnoException) => error);
  if (info instanceof Error) {
    if (info.code !== "ENOENT") {
      return [fail("data-dir", TITLE, `Cannot look at '${dir}' (${info.code ?? info.message}).`, `Make '${dir}' readable and writable by autoscan's user (${chownHint(dir)}).`)];
    }
    // autoscan creates a missing data directory at start: fine if it can.
    const parent = dirname(dir);
    const canCreate = await access(parent, constants.W_OK).then(() => true, () => false);
    return canCreate
      ? [ok("data-dir", TITLE, `'${dir}' does not exist yet; autoscan creates it at start.`), skip("data-dir.space", "Free space", "The data directory does not exist yet.")]
      : [
          fail("data-dir", TITLE, `'${dir}' does not exist and '${parent}' cannot be written${AS_USER}.`, `Create it for autoscan's user: mkdir -p '${dir}' && ${chownHint(dir)}.`),
          skip("data-dir.space", "Free space", "The data directory does not exist."),
        ];
  }
  if (!info.isDirectory()) {
    return [fail("data-dir", TITLE, `'${dir}' is not a folder.`, "Point --data-dir (AUTOSCAN_DATA_DIR) at a folder.")];
  }
  return [await writeProbe(dir, info.uid), await freeSpace(dir)];
}

async function writeProbe(dir: string, ownerUid: number): Promise<CheckResult> {
  const probe = join(dir, `.autoscan-doctor-${randomBytes(4).toString("hex")}.probe`);
  try {
    await writeFileDurably(probe, "autoscan doctor write probe\n");
    return ok("data-dir", TITLE, `'${dir}' takes writes (write, fsync, rename).`);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "";
    const owner = ownerUid === UID ? "" : ` (it belongs to uid ${ownerUid})`;
    switch (code) {
      case "EACCES":
      case "EPERM":
        return fail("data-dir", TITLE, `'${dir}' cannot be written${AS_USER}${owner}.`, `${chownHint(dir)}, or run autoscan as the folder's owner (PUID/PGID in Docker).`);
      case "EROFS":
        return fail("data-dir", TITLE, `'${dir}' is on a read-only filesystem.`, "Mount it read-write (in Docker: drop ':ro' from the /config volume).");
      case "ENOSPC":
      case "EDQUOT":
        return fail("data-dir", TITLE, `'${dir}' is full (${code}).`, "Free some space on that disk, or move the data directory (--data-dir).");
      default:
        return fail("data-dir", TITLE, `Writing a file in '${dir}' failed (${code || (error as Error).message}).`, "Check that disk (dmesg); autoscan's queue cannot be saved there.");
    }
  } finally {
    await rm(probe, { force: true }).catch(() => {});
  }
}

async function freeSpace(dir: string): Promise<CheckResult> {
  const fs = await statfs(dir).catch(() => undefined);
  if (!fs) return skip("data-dir.space", "Free space", `statfs of '${dir}' is not supported here.`);
  const free = fs.bavail * fs.bsize;
  if (free < MIN_FREE_BYTES) {
    return warn("data-dir.space", "Free space", `Only ${formatBytes(free)} free on the data directory's disk.`, "Free some space: when it is full, webhooks get 503 until it has room again.");
  }
  return ok("data-dir.space", "Free space", `${formatBytes(free)} free on the data directory's disk.`);
}

function chownHint(dir: string): string {
  return UID === undefined ? `give '${dir}' to autoscan's user` : `chown -R ${UID}:${GID ?? UID} '${dir}'`;
}

function formatBytes(bytes: number): string {
  const units = ["bytes", "KB", "MB", "GB", "TB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${unit === 0 ? value : value.toFixed(value >= 10 ? 0 : 1)} ${units[unit]}`;
}
