import * as v from "valibot";
import { isAbsolutePath } from "../paths/normalize.ts";

/**
 * A path as the sender gave it, from the field that carries it to the `ScanRequest`: the valibot pieces for the path
 * fields we read (every path that reaches a `ScanRequest` went through one of these, so a NUL byte, a control
 * character or a `..` segment never gets as far as the queue or a Plex URL), the file entries the four *arr apps all
 * send (`episodeFile`, `movieFile`, `trackFiles[]`, `bookFiles[]`, `deletedFiles[]`, the renamed-file lists), the
 * paths each names, and the shape of one app's parser.
 */

/** Longer than any real path (PATH_MAX is 4096 on Linux); beyond it the body is junk, not a path. */
export const MAX_PATH_LENGTH = 4096;

// C0 controls and DEL: no media file has them in its name, and NUL would cut a path short in native code.
const CONTROL = /[\u0000-\u001f\u007f]/;

export function hasControlCharacter(text: string): boolean {
  return CONTROL.test(text);
}

/** True when a segment of the path is `..` (either separator), which could climb out of a library folder. */
export function hasParentSegment(text: string): boolean {
  return text.includes("..") && text.split(/[\\/]/).some((segment) => segment === "..");
}

const pathText = v.pipe(
  v.string("must be a string"),
  v.nonEmpty("must not be empty"),
  v.maxLength(MAX_PATH_LENGTH, `must be at most ${MAX_PATH_LENGTH} characters`),
  v.check((text) => !hasControlCharacter(text), "must not contain NUL or other control characters"),
  v.check((text) => !hasParentSegment(text), "must not contain '..' segments"),
);

/** An absolute path (POSIX, `C:\…` or `\\server\share\…`), as every *arr app sends them. */
export const absolutePath = v.pipe(
  pathText,
  v.check((text) => isAbsolutePath(text), "must be an absolute path (/… or C:\\… or \\\\server\\share\\…)"),
);

/** A path relative to a folder the same payload gives (`episodeFile.relativePath`). */
export const relativePath = v.pipe(
  pathText,
  v.check((text) => !isAbsolutePath(text), "must be relative to the series or movie folder"),
);

/** A path that may be in any mapped form, absolute or a drive form (`My Drive/Media/…`); mapping decides. */
export const anyFormPath = pathText;

/** The files in one payload: more than this is not a real import, and would only flood the queue. */
export const MAX_FILES_PER_PAYLOAD = 10_000;

/** `folder` + `relative`, with exactly one separator; Windows separators are folded later by normalizePath. */
export function joinPath(folder: string, relative: string): string {
  const head = folder.replace(/[\\/]+$/, "");
  const tail = relative.replace(/^[\\/]+/, "");
  const separator = /^[A-Za-z]:[\\/]|^\\\\/.test(folder) && !folder.includes("/") ? "\\" : "/";
  return `${head}${separator}${tail}`;
}

/** The folder holding `path`, in the sender's own spelling (either separator); the root stays the root. */
export function parentOf(path: string): string {
  const trimmed = path.replace(/(?<=.)[\\/]+$/, "");
  const cut = Math.max(trimmed.lastIndexOf("/"), trimmed.lastIndexOf("\\"));
  if (cut < 0) return trimmed;
  const head = trimmed.slice(0, cut);
  // `/Show.mkv` → `/`, `C:\Show.mkv` → `C:\`: keep the root's separator.
  return head === "" || /^[A-Za-z]:$/.test(head) ? trimmed.slice(0, cut + 1) : head;
}

export type ArrAppName = "Sonarr" | "Radarr" | "Lidarr" | "Readarr";

/** A path as the sender gave it, before `SERVER_PATH_MAPPINGS`. */
export interface ReceivedPath {
  readonly path: string;
  readonly kind: "file" | "folder";
  readonly deleted?: boolean;
}

/** A file entry: *arr apps send `relativePath` (to the series/movie folder), an absolute `path`, or both. */
export const arrFile = v.looseObject(
  { relativePath: v.nullish(relativePath), path: v.nullish(absolutePath) },
  "must be an object",
);
export type ArrFile = v.InferOutput<typeof arrFile>;

/** A renamed-file entry: the new place (`relativePath`/`path`) and the old one (`previousPath`/`previousRelativePath`). */
export const renamedFile = v.looseObject(
  {
    relativePath: v.nullish(relativePath),
    path: v.nullish(absolutePath),
    previousRelativePath: v.nullish(relativePath),
    previousPath: v.nullish(absolutePath),
  },
  "must be an object",
);
export type RenamedFile = v.InferOutput<typeof renamedFile>;

export function fileList<T extends v.GenericSchema>(item: T) {
  return v.pipe(
    v.array(item, "must be a list"),
    v.maxLength(MAX_FILES_PER_PAYLOAD, `must hold at most ${MAX_FILES_PER_PAYLOAD} entries`),
  );
}

/** `deletedFiles` is a list of files on upgrades but a boolean on SeriesDelete/MovieDelete/…; only the list is read. */
export const deletedFiles = v.nullish(
  v.union([v.boolean(), fileList(arrFile)], "must be a list of files (or a boolean on delete events)"),
);

/** The payload fields every app shares: an upgrade's replaced files, and the upgrade flag. */
export const commonFields = { deletedFiles, isUpgrade: v.nullish(v.boolean("must be true or false")) };

/**
 * The paths of a scanning event, or why there are none: `malformed` (a field of the wrong type: not an *arr event as
 * the apps send them) or `unusable` (a well-formed event that names no path autoscan can use: Sportarr's SeriesDelete
 * without `series.path`, a Download without its file).
 */
export type ArrParse =
  | { readonly ok: true; readonly paths: readonly ReceivedPath[] }
  | { readonly ok: false; readonly reason: string; readonly unusable: boolean };

/** One *arr app's parser (`sonarr.ts` …): which bodies are its own, and the paths of each scanning event. */
export interface ArrApp {
  readonly name: ArrAppName;
  /** The word in the classic log line: `scan request for series: '…'`. */
  readonly noun: string;
  /** Event types that lead to scans; any other event is answered 200 with no scan. */
  readonly scanEvents: ReadonlySet<string>;
  /** Top-level fields only this app sends (detection by shape). */
  readonly matchKeys: readonly string[];
  /** Paths for one of `scanEvents`. `event` is the raw `eventType`. */
  parse(body: unknown, event: string): ArrParse;
}

/** Runs the app's valibot schema and turns its first issue into a one-line reason naming the field. */
export function readPayload<T extends v.GenericSchema>(
  schema: T,
  body: unknown,
  app: ArrAppName,
  event: string,
): { ok: true; value: v.InferOutput<T> } | { ok: false; failure: ArrParse } {
  const result = v.safeParse(schema, body);
  if (result.success) return { ok: true, value: result.output };
  const issue = result.issues[0];
  const path = issue ? v.getDotPath(issue) : null;
  const message = issue ? (path ? `'${path}' ${issue.message}` : issue.message) : "is not valid";
  return { ok: false, failure: parseFailure(app, event, message) };
}

/** The parser's answer from the event's paths (or the reason none could be found: the event is unusable). */
export function toParse(app: ArrAppName, event: string, result: PathsOrReason): ArrParse {
  return typeof result === "string" ? parseFailure(app, event, result, true) : { ok: true, paths: uniquePaths(result) };
}

function parseFailure(app: ArrAppName, event: string, reason: string, unusable = false): ArrParse {
  return { ok: false, reason: `${app} ${event} payload: ${reason}`, unusable };
}

/** Drops repeated paths (a Lidarr album lists each track once, but upgrades can repeat a deleted file). */
function uniquePaths(paths: readonly ReceivedPath[]): ReceivedPath[] {
  const seen = new Set<string>();
  return paths.filter((entry) => {
    const key = `${entry.kind}:${entry.deleted ? 1 : 0}:${entry.path}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** A folder-relative or absolute file entry → one absolute path, or the reason it cannot be found. */
export function resolveFile(
  folder: string | null | undefined,
  file: ArrFile,
  field: string,
  folderField: string,
): { path: string } | { reason: string } {
  if (file.relativePath && folder) return { path: joinPath(folder, file.relativePath) };
  if (file.path) return { path: file.path };
  if (file.relativePath) return { reason: `missing '${folderField}' (needed with '${field}.relativePath')` };
  return { reason: `missing '${field}.path' or '${field}.relativePath'` };
}

/** Either the paths found or the reason (naming the field) why a path could not be found. */
export type PathsOrReason = ReceivedPath[] | string;

/** One file entry (`episodeFile`, `bookFile` …). */
export function filePath(
  folder: string | null | undefined,
  file: ArrFile | null | undefined,
  field: string,
  folderField: string,
  deleted = false,
): PathsOrReason {
  if (!file) return `missing '${field}'`;
  const resolved = resolveFile(folder, file, field, folderField);
  if ("reason" in resolved) return resolved.reason;
  return [deleted ? { path: resolved.path, kind: "file", deleted: true } : { path: resolved.path, kind: "file" }];
}

/** A list of file entries; the first unresolvable one is named by its index. */
export function filePaths(
  folder: string | null | undefined,
  files: readonly ArrFile[],
  field: string,
  folderField: string,
  deleted = false,
): PathsOrReason {
  return combine(...files.map((file, index) => filePath(folder, file, `${field}[${index}]`, folderField, deleted)));
}

/** Upgrade imports list the replaced files under `deletedFiles[]`; delete events send a boolean there instead. */
export function upgradeDeletions(folder: string | null | undefined, value: unknown, folderField: string): PathsOrReason {
  return Array.isArray(value) ? filePaths(folder, value as ArrFile[], "deletedFiles", folderField, true) : [];
}

/** The first reason, else all paths in order. */
export function combine(...parts: readonly PathsOrReason[]): PathsOrReason {
  const out: ReceivedPath[] = [];
  for (const part of parts) {
    if (typeof part === "string") return part;
    out.push(...part);
  }
  return out;
}

/** A folder field (`series.path`, `artist.path` …) → that folder, or the reason it is missing. */
export function folderPath(folder: string | null | undefined, field: string, deleted = false): PathsOrReason {
  if (!folder) return `missing '${field}'`;
  return [deleted ? { path: folder, kind: "folder", deleted: true } : { path: folder, kind: "folder" }];
}

/**
 * A webhook's Rename: the renamed files themselves, then their folders (`renameFolders`). Each file at its new place
 * (so its item can be refreshed in place once the folder's scan has landed: `webhook.ts` asks it), then each at its
 * old place as deleted (a route that scans paths, not folders, such as Jellyfin's TargetedScan, drops the stale item;
 * a folder scan does that anyway). The files share their folders' one scan: a file request scans its folder. New
 * files come first: the landed check reads a folder's first requests.
 */
export function renamedPaths(
  folder: string | null | undefined,
  files: readonly RenamedFile[],
  field: string,
  folderField: string,
): PathsOrReason {
  const now: ReceivedPath[] = [];
  const before: ReceivedPath[] = [];
  for (const [index, file] of files.entries()) {
    const resolved = resolveFile(folder, file, `${field}[${index}]`, folderField);
    if ("reason" in resolved) return resolved.reason;
    now.push({ path: resolved.path, kind: "file" });
    const previous = previousPath(folder, file);
    if (previous) before.push({ path: previous, kind: "file", deleted: true });
  }
  return combine(now, before, renameFolders(folder, files, field, folderField));
}

/** Where a renamed file was: `previousPath`, else `previousRelativePath` under the folder; unknown without either. */
function previousPath(folder: string | null | undefined, file: RenamedFile): string | undefined {
  return file.previousPath ?? (file.previousRelativePath && folder ? joinPath(folder, file.previousRelativePath) : undefined);
}

/**
 * Rename: the folders the files left (the sender says they are gone from there: `deleted`) and the folders they
 * went to. A folder that is both old and new is listed once, as new. (Backfill's renames are these folders only.)
 */
export function renameFolders(
  folder: string | null | undefined,
  files: readonly RenamedFile[],
  field: string,
  folderField: string,
): PathsOrReason {
  const before: string[] = [];
  const after: string[] = [];
  for (const [index, file] of files.entries()) {
    const now = resolveFile(folder, file, `${field}[${index}]`, folderField);
    if ("reason" in now) return now.reason;
    after.push(parentOf(now.path));
    const previous = previousPath(folder, file);
    if (previous) before.push(parentOf(previous));
  }
  const fresh = new Set(after);
  return [
    ...[...new Set(before)].filter((path) => !fresh.has(path)).map((path): ReceivedPath => ({ path, kind: "folder", deleted: true })),
    ...[...fresh].map((path): ReceivedPath => ({ path, kind: "folder" })),
  ];
}
