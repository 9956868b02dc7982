import * as v from "valibot";
import { jsonBody } from "../../http/json-body.ts";
import { parseBody } from "../media-wire-schemas.ts";

/**
 * The Audiobookshelf answers we read (refresh-fastpath-targets.md §5), validated before use and lenient about the
 * many fields we do not need. Ids are strings (UUIDs on 2.x servers).
 */

/** `GET /api/libraries`: wrapped, `{ "libraries": [ … ] }` (a bare list is an older or a foreign server). */
const LibraryList = v.looseObject({
  libraries: v.array(
    v.looseObject({
      id: v.string(),
      name: v.nullish(v.string()),
      mediaType: v.nullish(v.string()),
      folders: v.nullish(v.array(v.looseObject({ fullPath: v.nullish(v.string()) }))),
      settings: v.nullish(v.looseObject({ disableWatcher: v.nullish(v.boolean()) })),
    }),
  ),
});

export interface AbsLibrary {
  readonly id: string;
  readonly name: string;
  /** `book` or `podcast`. */
  readonly mediaType: string;
  /** Its folders, in the server's path form. */
  readonly folders: readonly string[];
  /** `settings.disableWatcher`: this library's own switch of the file watcher. */
  readonly watcherDisabled: boolean;
}

export function parseAbsLibraries(body: string, what: string): AbsLibrary[] {
  return parseBody(body, LibraryList, what).libraries.map((library) => ({
    id: library.id,
    name: library.name ?? library.id,
    mediaType: library.mediaType ?? "book",
    folders: (library.folders ?? []).flatMap((folder) => (folder.fullPath ? [folder.fullPath] : [])),
    watcherDisabled: library.settings?.disableWatcher === true,
  }));
}

/** `POST /api/authorize`: the key's user and the server's settings (`scannerDisableWatcher` turns every watcher off). */
const Authorize = v.looseObject({
  user: v.looseObject({ username: v.nullish(v.string()), type: v.nullish(v.string()) }),
  serverSettings: v.nullish(v.looseObject({ scannerDisableWatcher: v.nullish(v.boolean()), version: v.nullish(v.string()) })),
});

export interface AbsAuthorization {
  readonly username: string;
  /** `root`, `admin`, `user` or `guest`: scans need root or admin. */
  readonly userType: string;
  /** `serverSettings.scannerDisableWatcher`: no library has a watcher then. */
  readonly watcherDisabled: boolean;
}

export function parseAbsAuthorization(body: string, what: string): AbsAuthorization {
  const answer = parseBody(body, Authorize, what);
  return {
    username: answer.user.username ?? "?",
    userType: answer.user.type ?? "?",
    watcherDisabled: answer.serverSettings?.scannerDisableWatcher === true,
  };
}

/** Users whose key may scan: the scan routes answer 403 to the others. */
export function isAdminType(userType: string): boolean {
  return userType === "root" || userType === "admin";
}

/** `GET /api/tasks`: what the server is doing; a library scan is `action: "library-scan"` with `data.libraryId`. */
const TaskList = v.looseObject({
  tasks: v.array(
    v.looseObject({
      action: v.nullish(v.string()),
      isFinished: v.nullish(v.boolean()),
      data: v.nullish(v.looseObject({ libraryId: v.nullish(v.string()) })),
    }),
  ),
});

/** The ids of the libraries a scan is running in now. */
export function parseRunningScans(body: string, what: string): Set<string> {
  const running = new Set<string>();
  for (const task of parseBody(body, TaskList, what).tasks) {
    if (task.action === "library-scan" && task.isFinished !== true && task.data?.libraryId) running.add(task.data.libraryId);
  }
  return running;
}

/** `GET /api/libraries/{id}/items?minified=1`: one page, `{ results: [ {id, path, isFile} ], total }`. */
const ItemsPage = v.looseObject({
  results: v.array(v.looseObject({ id: v.string(), path: v.nullish(v.string()), isFile: v.nullish(v.boolean()), isMissing: v.nullish(v.boolean()) })),
  total: v.nullish(v.number()),
});

export interface AbsItem {
  readonly id: string;
  /** The item's folder (a book's folder), or its file for a single-file item. */
  readonly path: string;
  readonly isFile: boolean;
  /** Its files are gone from disk: Audiobookshelf keeps the item, marked missing, until someone removes it. */
  readonly isMissing: boolean;
}

export function parseAbsItemsPage(body: string, what: string): { readonly items: AbsItem[]; readonly total?: number } {
  const page = parseBody(body, ItemsPage, what);
  const items = page.results.flatMap((item) => (item.path ? [{ id: item.id, path: item.path, isFile: item.isFile === true, isMissing: item.isMissing === true }] : []));
  return { items, ...(typeof page.total === "number" ? { total: page.total } : {}) };
}

/** `GET /api/items/{id}`: the item's files, `libraryFiles[].metadata.path`. */
const ItemFiles = v.looseObject({
  libraryFiles: v.nullish(v.array(v.looseObject({ metadata: v.nullish(v.looseObject({ path: v.nullish(v.string()) })) }))),
});

export function parseAbsItemFiles(body: string, what: string): string[] {
  return (parseBody(body, ItemFiles, what).libraryFiles ?? []).flatMap((file) => (file.metadata?.path ? [file.metadata.path] : []));
}

/** `POST /api/items/{id}/scan`: `{ result: "NOTHING" | "ADDED" | "UPDATED" | "REMOVED" | "UPTODATE" }`. */
const ItemScan = v.looseObject({ result: v.nullish(v.string()) });

export function parseAbsItemScan(body: string, what: string): string {
  return parseBody(body, ItemScan, what).result ?? "?";
}

/** `GET /status` (no key needed): `{ app: "audiobookshelf", serverVersion }`; anything else is not Audiobookshelf. */
export function parseAbsStatus(body: string): { readonly version?: string } | undefined {
  const json = jsonBody(body);
  if (typeof json !== "object" || json === null) return undefined;
  const { app, serverVersion } = json as Record<string, unknown>;
  if (app !== "audiobookshelf") return undefined;
  return typeof serverVersion === "string" && serverVersion !== "" ? { version: serverVersion } : {};
}

