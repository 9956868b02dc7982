import { stat } from "node:fs/promises";
import { describeError } from "../../core/errors.ts";
import type { Logger } from "../../core/logger.ts";
import { parentFolder, withoutTrailingSlash } from "../../paths/normalize.ts";
import type { CheckResult, WorkItem, WorkRequest } from "./dispatch-port.ts";

/**
 * plex_autoscan's file checks, per folder: every requested path that was not a deletion must exist on autoscan's
 * own disk (through `SERVER_FILE_EXIST_PATH_MAPPINGS`, then the `SERVER_PATH_MAPPINGS` forms) before the folder is
 * scanned. Up to `maxChecks` checks, `delayMs` apart; the dispatcher does other work in between.
 *
 * - all present → scan. A path the sender could not classify (`unknown`) that turns out to be a folder is scanned as
 *   that folder, and one that turns out to be a file scans its parent.
 * - some missing after the last check → scan for the ones that exist; none → with `folderOnExhaustion` scan the
 *   folder if it exists (plex_autoscan's `SERVER_SCAN_FOLDER_ON_FILE_EXISTS_EXHAUSTION`), else `failed`.
 * `SERVER_MAX_FILE_CHECKS: 0` still checks once, as plex_autoscan did.
 */
export type DiskEntry = "file" | "directory" | "missing";

export interface FileCheckSettings {
  readonly maxChecks: number;
  readonly delayMs: number;
  readonly folderOnExhaustion: boolean;
  readonly localForms: (serverPath: string) => readonly string[];
  readonly statPath: (localPath: string) => Promise<DiskEntry>;
  readonly log: Logger;
  /** Called for each missing file before the next check (an rclone cache refresh, for one). */
  readonly onFileMissing?: (serverPath: string, localPath: string) => Promise<void>;
  /** Called before each check of a request, with the local forms about to be looked at (the rclone refresh of a
   *  Google Drive file, so the mount shows it at the first check). Its failure is logged; the check goes on. */
  readonly beforeFileCheck?: (request: WorkRequest, localForms: readonly string[]) => Promise<void>;
}

interface Located {
  readonly request: WorkRequest;
  readonly local: string;
  readonly entry: DiskEntry;
}

export async function checkItemFiles(item: WorkItem, now: number, settings: FileCheckSettings): Promise<CheckResult> {
  const { log } = settings;
  const max = Math.max(1, settings.maxChecks);
  const check = item.checks + 1;
  const wanted = uniqueByPath(item.requests.filter((request) => !request.deleted));
  // Deletions only: the *arr told us the file is gone, there is nothing to wait for.
  if (wanted.length === 0) return { kind: "ready", checks: item.checks, scanFolder: item.folder, files: [] };

  const found = await Promise.all(wanted.map((request) => locate(request, settings)));
  const present = found.filter((f) => f.entry !== "missing");
  const missing = found.filter((f) => f.entry === "missing");
  for (const f of present) log.info({ path: f.local }, `File '${f.local}' exists on check ${check} of ${max}.`);
  if (missing.length === 0) return ready(item, present, check);

  if (check < max) {
    const seconds = Math.round(settings.delayMs / 1000);
    for (const f of missing) {
      log.info(
        { path: f.local },
        `File '${f.local}' did not exist on check ${check} of ${max}. Checking again in ${seconds} seconds...`,
      );
      await settings.onFileMissing?.(f.request.path, f.local).catch((error: unknown) => {
        const message = `Could not refresh the cache for '${f.local}': ${describeError(error)}`;
        log.warn({ err: error, path: f.local }, message);
      });
    }
    if (settings.folderOnExhaustion && check === max - 1) {
      const first = missing[0]?.local ?? "";
      log.warn(`File '${first}' reached the penultimate file check. The last check falls back to '${item.folder}'.`);
    }
    return { kind: "wait", checks: check, nextAt: now + settings.delayMs };
  }
  return exhausted(item, present, missing, check, settings);
}

async function exhausted(
  item: WorkItem,
  present: readonly Located[],
  missing: readonly Located[],
  check: number,
  settings: FileCheckSettings,
): Promise<CheckResult> {
  const { log } = settings;
  if (present.length > 0) {
    for (const f of missing) {
      const message = `File '${f.local}' exhausted all available checks. Scanning for the file(s) that exist.`;
      log.warn({ path: f.local }, message);
    }
    return ready(item, present, check);
  }
  if (settings.folderOnExhaustion) {
    const folder = await locateFolder(item.folder, settings);
    if (folder.entry === "directory") {
      const first = missing[0]?.local ?? "";
      log.warn(`File '${first}' exhausted all available checks. Scanning its folder '${item.folder}' instead.`);
      return { kind: "ready", checks: check, scanFolder: item.folder, files: [] };
    }
  }
  for (const f of missing) {
    log.warn({ path: f.local }, `File '${f.local}' exhausted all available checks. Aborting scan request.`);
  }
  const names = missing.map((f) => `'${f.local}'`).join(", ");
  return { kind: "failed", checks: check, reason: `Not found after ${check} file check(s): ${names}` };
}

function ready(item: WorkItem, present: readonly Located[], check: number): CheckResult {
  const candidates = new Set(
    present.map((f) =>
      f.entry === "directory" ? withoutTrailingSlash(f.request.path) : parentFolder(f.request.path),
    ),
  );
  if (item.requests.some((request) => request.deleted)) candidates.add(item.folder);
  const [only] = candidates;
  const scanFolder = candidates.size === 1 && only !== undefined ? only : item.folder;
  const files = present.filter((f) => f.entry === "file").map((f) => f.request.path);
  return { kind: "ready", checks: check, scanFolder, files };
}

async function locate(request: WorkRequest, settings: FileCheckSettings): Promise<Located> {
  const forms = settings.localForms(request.path);
  await settings.beforeFileCheck?.(request, forms).catch((error: unknown) => {
    settings.log.warn({ err: error, path: request.path }, `Could not prepare the check of '${request.path}': ${describeError(error)}`);
  });
  for (const local of forms) {
    const entry = await settings.statPath(local);
    if (entry !== "missing") return { request, local, entry };
  }
  return { request, local: forms[0] ?? request.path, entry: "missing" };
}

function locateFolder(folder: string, settings: FileCheckSettings): Promise<Located> {
  return locate({ path: folder, kind: "folder", deleted: false, source: "", event: "" }, { ...settings, beforeFileCheck: undefined });
}

function uniqueByPath(requests: readonly WorkRequest[]): WorkRequest[] {
  const seen = new Map<string, WorkRequest>();
  for (const request of requests) if (!seen.has(request.path)) seen.set(request.path, request);
  return [...seen.values()];
}

/** The default `statPath`: what is at a local path. Unreadable counts as missing, as os.path.exists did. */
export async function statLocalPath(localPath: string): Promise<DiskEntry> {
  try {
    return (await stat(localPath)).isDirectory() ? "directory" : "file";
  } catch {
    return "missing";
  }
}
