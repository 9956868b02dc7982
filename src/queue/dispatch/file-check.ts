import { describeError } from "../../core/errors.ts";
import type { Logger } from "../../core/logger.ts";
import type { DiskEntry } from "../../paths/disk-probe.ts";
import { normalizePath, normalizeSeparators, parentFolder, withoutTrailingSlash } from "../../paths/normalize.ts";
import { carrySpelling, findSpelling } from "../../paths/spelling.ts";
import type { CheckResult, WorkItem, WorkRequest } from "./dispatch-port.ts";

export type { DiskEntry } from "../../paths/disk-probe.ts";

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
 *
 * Names keep their bytes: a path is looked up as received, then under its other Unicode spelling (NFC ↔ NFD, see
 * `paths/spelling.ts`), and what is scanned is spelled as found on disk. The item's `folder` is only its merge key
 * (NFC); a folder scanned without a look at the disk (deletions) is spelled as its first request was received.
 * A disk that does not answer is not a disk that says "missing": when a look gets no answer in time (`statPath` gives
 * `unanswered`), the check stops there and says so (`unanswered`, with the path), and the dispatcher holds the folder
 * for that mount without spending a check. The folder's paths are looked at one after the other, so at most one stat
 * per folder is in flight.
 */

export interface FileCheckSettings {
  readonly maxChecks: number;
  readonly delayMs: number;
  readonly folderOnExhaustion: boolean;
  readonly localForms: (serverPath: string) => readonly string[];
  /** What is at a local path; the shared `DiskProbe`'s `stat` (bounded in time and in threads) in the service. */
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
  /** The local path as found on disk (else the first form looked at, or the one that did not answer). */
  readonly local: string;
  readonly entry: DiskEntry;
  /** The requested path (server form) spelled as found on disk. */
  readonly server: string;
  /** Whether it was looked for under another form than the requested path itself (a mapping reached it). */
  readonly mapped: boolean;
}

const isPresent = (entry: DiskEntry): entry is "file" | "directory" => entry === "file" || entry === "directory";

/** A check's outcome: a result to record, or the disk did not answer under `local` (nothing to record: a hold). */
export type FileCheckOutcome = CheckResult | { readonly kind: "unanswered"; readonly local: string };

export async function checkItemFiles(item: WorkItem, now: number, settings: FileCheckSettings): Promise<FileCheckOutcome> {
  const { log } = settings;
  const max = Math.max(1, settings.maxChecks);
  const check = item.checks + 1;
  const wanted = uniqueByPath(item.requests.filter((request) => !request.deleted));
  // Deletions only: the *arr told us the file is gone, there is nothing to wait for.
  if (wanted.length === 0) return { kind: "ready", checks: item.checks, scanFolder: spelledFolder(item, []), files: [] };

  const found: Located[] = [];
  for (const request of wanted) {
    const located = await locate(request, settings);
    if (located.entry === "unanswered") {
      log.debug({ id: item.id, path: located.local }, `'${located.local}' could not be looked at (the disk did not answer); the folder waits for its mount.`);
      return { kind: "unanswered", local: located.local };
    }
    found.push(located);
  }
  const present = found.filter((f) => isPresent(f.entry));
  const missing = found.filter((f) => !isPresent(f.entry));
  const id = item.id;
  // Per-file news is DEBUG: a 12-track album is one folder, and its INFO lines are the intake, the scan and the result.
  for (const f of present) log.debug({ id, path: f.local }, `File '${f.local}' exists on check ${check} of ${max}.`);
  if (missing.length === 0) return ready(item, present, check);

  if (check < max) {
    const seconds = Math.round(settings.delayMs / 1000);
    for (const f of missing) {
      log.debug({ id, path: f.local }, `File '${f.local}' did not exist on check ${check} of ${max}. Checking again in ${seconds} seconds...`);
      await settings.onFileMissing?.(f.request.path, f.local).catch((error: unknown) => {
        const message = `Could not refresh the cache for '${f.local}': ${describeError(error)}`;
        log.warn({ err: error, id, path: f.local }, message);
      });
    }
    if (settings.folderOnExhaustion && check === max - 1) {
      const first = missing[0]?.local ?? "";
      log.debug({ id }, `File '${first}' reached the penultimate file check. The last check falls back to '${item.folder}'.`);
    }
    return { kind: "wait", checks: check, waitMs: settings.delayMs };
  }
  return exhausted(item, present, missing, check, settings);
}

async function exhausted(
  item: WorkItem,
  present: readonly Located[],
  missing: readonly Located[],
  check: number,
  settings: FileCheckSettings,
): Promise<FileCheckOutcome> {
  const { log } = settings;
  const id = item.id;
  const listed = listFiles(missing);
  if (present.length > 0) {
    const message = `${listed} not found after ${check} check(s); scanning for the ${present.length} file(s) that exist.`;
    log.warn({ id, missing: missing.map((f) => f.local) }, message);
    return ready(item, present, check);
  }
  if (settings.folderOnExhaustion) {
    const folder = await locateFolder(spelledFolder(item, []), settings);
    if (folder.entry === "unanswered") return { kind: "unanswered", local: folder.local };
    if (folder.entry === "directory") {
      log.warn({ id, missing: missing.map((f) => f.local) }, `${listed} not found after ${check} check(s); scanning the folder '${folder.server}' instead.`);
      return { kind: "ready", checks: check, scanFolder: folder.server, files: [] };
    }
  }
  log.warn({ id, missing: missing.map((f) => f.local) }, `${listed} not found after ${check} check(s); not scanning '${item.folder}'.`);
  const names = missing.map((f) => `'${f.local}'`).join(", ");
  return { kind: "failed", checks: check, reason: `Not found after ${check} file check(s): ${names}${missing.some((f) => f.mapped) ? "" : UNMAPPED_NOTE}` };
}

/**
 * A failure's reason names its likelier cause: a path no form reaches was looked for only as it was received, which is
 * the mapping's fault more often than the disk's (an app that sees the media elsewhere than Plex and autoscan).
 */
const UNMAPPED_NOTE =
  ", looked for only at that path: no SERVER_PATH_MAPPINGS or SERVER_FILE_EXIST_PATH_MAPPINGS form reaches it " +
  "(if the app sees the media under another path, add that form to SERVER_PATH_MAPPINGS, then Retry)";

/** `File '/a.mkv'`, or `3 files ('/a.mkv', '/b.mkv', …)`: one line names what is missing without flooding. */
function listFiles(files: readonly Located[]): string {
  const first = files[0]?.local ?? "";
  if (files.length === 1) return `File '${first}'`;
  const shown = files.slice(0, 3).map((f) => `'${f.local}'`).join(", ");
  return `${files.length} files (${shown}${files.length > 3 ? ", …" : ""})`;
}

/**
 * The folder to scan: the one folder every request resolved to (compared in NFC, spelled as found on disk), else the
 * item's folder, spelled as on disk or as first received.
 */
function ready(item: WorkItem, present: readonly Located[], check: number): CheckResult {
  const candidates = new Map<string, string>();
  const add = (folder: string): void => {
    const key = normalizePath(folder);
    if (!candidates.has(key)) candidates.set(key, folder);
  };
  for (const f of present) add(f.entry === "directory" ? withoutTrailingSlash(f.server) : parentFolder(f.server));
  for (const request of item.requests) if (request.deleted) add(receivedFolder(request));
  const [only] = candidates.values();
  const scanFolder = candidates.size === 1 && only !== undefined ? only : spelledFolder(item, present);
  const files = present.filter((f) => f.entry === "file").map((f) => f.server);
  return { kind: "ready", checks: check, scanFolder, files };
}

/** A request's folder in its received bytes: a file's parent, else the path itself (never wider than it names). */
function receivedFolder(request: WorkRequest): string {
  const path = withoutTrailingSlash(normalizeSeparators(request.path));
  return request.kind === "file" ? parentFolder(path) : path;
}

/**
 * The item's folder (its merge key, NFC) spelled as found on disk under a present path, else as in the first request
 * received under it, else the key itself.
 */
function spelledFolder(item: WorkItem, present: readonly Located[]): string {
  const key = normalizePath(item.folder);
  const depth = key === "/" ? 1 : key.split("/").length;
  const paths = [...present.map((f) => f.server), ...item.requests.map((r) => withoutTrailingSlash(normalizeSeparators(r.path)))];
  for (const path of paths) {
    const compared = normalizePath(path);
    if (compared !== key && !compared.startsWith(key === "/" ? "/" : `${key}/`)) continue;
    return key === "/" ? "/" : path.split("/").slice(0, depth).join("/");
  }
  return item.folder;
}

async function locate(request: WorkRequest, settings: FileCheckSettings): Promise<Located> {
  const forms = settings.localForms(request.path);
  await settings.beforeFileCheck?.(request, forms).catch((error: unknown) => {
    settings.log.warn({ err: error, path: request.path }, `Could not prepare the check of '${request.path}': ${describeError(error)}`);
  });
  const mapped = forms.some((form) => form !== request.path);
  let unanswered: string | undefined;
  for (const local of forms) {
    const found = await findSpelling(local, settings.statPath);
    if (isPresent(found.entry)) {
      return { request, local: found.path, entry: found.entry, server: carrySpelling(request.path, local, found.path), mapped };
    }
    if (found.entry === "unanswered") unanswered ??= local;
  }
  // Not found under any form; when one of them did not answer, the file may be there: "not there yet".
  if (unanswered !== undefined) return { request, local: unanswered, entry: "unanswered", server: request.path, mapped };
  return { request, local: forms[0] ?? request.path, entry: "missing", server: request.path, mapped };
}

function locateFolder(folder: string, settings: FileCheckSettings): Promise<Located> {
  return locate({ path: folder, kind: "folder", deleted: false, source: "", event: "" }, { ...settings, beforeFileCheck: undefined });
}

/** One look per path, two spellings of one path counting as one (the first received is kept). */
function uniqueByPath(requests: readonly WorkRequest[]): WorkRequest[] {
  const seen = new Map<string, WorkRequest>();
  for (const request of requests) {
    const key = normalizePath(request.path);
    if (!seen.has(key)) seen.set(key, request);
  }
  return [...seen.values()];
}
