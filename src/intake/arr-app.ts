import * as v from "valibot";
import { MAX_FILES_PER_PAYLOAD, absolutePath, joinPath, parentOf, relativePath } from "./path-fields.ts";

/**
 * What the four *arr parsers share: the shape of their answer and the file entries they all send (`episodeFile`,
 * `movieFile`, `trackFiles[]`, `bookFiles[]`, `deletedFiles[]`, the renamed-file lists).
 */

export type ArrAppName = "Sonarr" | "Radarr" | "Lidarr" | "Readarr";

/** A path as the sender gave it, before `SERVER_PATH_MAPPINGS`. */
export interface ReceivedPath {
  readonly path: string;
  readonly kind: "file" | "folder";
  readonly deleted?: boolean;
}

/**
 * The paths of a scanning event, or why there are none: `malformed` (a field of the wrong type: not an *arr event as
 * the apps send them) or `unusable` (a well-formed event that names no path autoscan can use: Sportarr's SeriesDelete
 * without `series.path`, a Download without its file).
 */
export type ArrParse =
  | { readonly ok: true; readonly paths: readonly ReceivedPath[] }
  | { readonly ok: false; readonly reason: string; readonly unusable: boolean };

export interface ArrApp {
  readonly name: ArrAppName;
  /** The word in the classic log line: `scan request for series: '…'`. */
  readonly noun: string;
  /** Event types that lead to scans; any other event is answered 200 with no scan. */
  readonly scanEvents: ReadonlySet<string>;
  /** True when the payload's fields say it came from this app. */
  matches(body: Readonly<Record<string, unknown>>): boolean;
  /** Paths for one of `scanEvents`. `event` is the raw `eventType`. */
  parse(body: unknown, event: string): ArrParse;
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

export const objectBody = v.looseObject({}, "must be a JSON object");

/** The payload fields every app shares: an upgrade's replaced files, and the upgrade flag. */
export const commonFields = { deletedFiles, isUpgrade: v.nullish(v.boolean("must be true or false")) };

/** What makes one *arr app: its payload schema and which paths each scanning event names. */
export interface ArrAppDefinition<T extends v.GenericSchema> {
  readonly name: ArrAppName;
  readonly noun: string;
  readonly scanEvents: readonly string[];
  /** Top-level fields only this app sends (detection by shape). */
  readonly matchKeys: readonly string[];
  readonly payload: T;
  pathsFor(body: v.InferOutput<T>, event: string): PathsOrReason;
}

export function defineArrApp<T extends v.GenericSchema>(definition: ArrAppDefinition<T>): ArrApp {
  const { name } = definition;
  return {
    name,
    noun: definition.noun,
    scanEvents: new Set(definition.scanEvents),
    matches: (body) => hasAnyKey(body, definition.matchKeys),
    parse(body, event) {
      const parsed = parseWith(definition.payload, body, name, event);
      return parsed.ok ? toParse(name, event, definition.pathsFor(parsed.value, event)) : parsed.failure;
    },
  };
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
 * Rename: the folders the files left (the sender says they are gone from there: `deleted`) and the folders they
 * went to. A folder that is both old and new is listed once, as new.
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
    const previous = file.previousPath ?? (file.previousRelativePath && folder ? joinPath(folder, file.previousRelativePath) : undefined);
    if (previous) before.push(parentOf(previous));
  }
  const fresh = new Set(after);
  return [
    ...[...new Set(before)].filter((path) => !fresh.has(path)).map((path): ReceivedPath => ({ path, kind: "folder", deleted: true })),
    ...[...fresh].map((path): ReceivedPath => ({ path, kind: "folder" })),
  ];
}

/** Drops repeated paths (a Lidarr album lists each track once, but upgrades can repeat a deleted file). */
export function uniquePaths(paths: readonly ReceivedPath[]): ReceivedPath[] {
  const seen = new Set<string>();
  return paths.filter((entry) => {
    const key = `${entry.kind}:${entry.deleted ? 1 : 0}:${entry.path}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

export function parseFailure(app: ArrAppName, event: string, reason: string, unusable = false): ArrParse {
  return { ok: false, reason: `${app} ${event} payload: ${reason}`, unusable };
}

/** The parser's answer from the event's paths (or the reason none could be found: the event is unusable). */
export function toParse(app: ArrAppName, event: string, result: PathsOrReason): ArrParse {
  return typeof result === "string" ? parseFailure(app, event, result, true) : { ok: true, paths: uniquePaths(result) };
}

/** Runs a valibot schema and turns its first issue into a one-line reason naming the field. */
export function parseWith<T extends v.GenericSchema>(
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

export function hasAnyKey(body: Readonly<Record<string, unknown>>, keys: readonly string[]): boolean {
  return keys.some((key) => body[key] !== undefined && body[key] !== null);
}
