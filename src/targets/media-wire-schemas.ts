import * as v from "valibot";
import { MediaHttpError } from "./media-http.ts";
import type { LibraryFolder } from "./library-folders.ts";

/**
 * The Jellyfin and Emby library listings we read (integrations.md §4), validated before use and lenient about
 * fields we do not need (a library with no folders has `Locations: []` or, on some versions, null).
 */
const JellyfinVirtualFolders = v.array(
  v.looseObject({
    Name: v.nullish(v.string()),
    Locations: v.nullish(v.array(v.string())),
    ItemId: v.nullish(v.string()),
  }),
);

const EmbySelectableFolders = v.array(
  v.looseObject({
    Name: v.nullish(v.string()),
    Id: v.nullish(v.string()),
    SubFolders: v.nullish(v.array(v.looseObject({ Path: v.nullish(v.string()) }))),
  }),
);

/** `GET /Library/VirtualFolders` (Jellyfin): `[{Name, Locations: [path]}]`. */
export function parseJellyfinLibraries(body: string, what: string): LibraryFolder[] {
  const folders = parseBody(body, JellyfinVirtualFolders, what);
  return folders.flatMap((f) => (f.Locations ?? []).map((path) => ({ library: f.Name ?? "?", path })));
}

/** `GET /Library/SelectableMediaFolders` (Emby): `[{Name, SubFolders: [{Path}]}]`. */
export function parseEmbyLibraries(body: string, what: string): LibraryFolder[] {
  const folders = parseBody(body, EmbySelectableFolders, what);
  return folders.flatMap((f) =>
    (f.SubFolders ?? []).flatMap((sub) => (sub.Path ? [{ library: f.Name ?? "?", path: sub.Path }] : [])),
  );
}

/**
 * A library's folders with the id of the library's own item, where a descent through `GET /Items?ParentId=` starts
 * (library-lookup.ts). A library the server lists without an id cannot be looked into and is left out.
 */
export interface LibraryRoot extends LibraryFolder {
  /** Jellyfin's `ItemId`, Emby's top-level `Id` (the collection folder, not a `SubFolders[].Id`). */
  readonly id: string;
}

/** `GET /Library/VirtualFolders` (Jellyfin) as roots: one per location, each with the library's `ItemId`. */
export function parseJellyfinLibraryRoots(body: string, what: string): LibraryRoot[] {
  const folders = parseBody(body, JellyfinVirtualFolders, what);
  return folders.flatMap(({ Name, Locations, ItemId: id }) =>
    id ? (Locations ?? []).map((path) => ({ library: Name ?? "?", path, id })) : [],
  );
}

/** `GET /Library/SelectableMediaFolders` (Emby) as roots: one per sub-folder, each with the library's `Id`. */
export function parseEmbyLibraryRoots(body: string, what: string): LibraryRoot[] {
  const folders = parseBody(body, EmbySelectableFolders, what);
  return folders.flatMap(({ Name, Id: id, SubFolders }) =>
    id ? (SubFolders ?? []).flatMap((sub) => (sub.Path ? [{ library: Name ?? "?", path: sub.Path, id }] : [])) : [],
  );
}

/**
 * `GET /Items?ParentId=` (both servers): the children of one item. `Path` is there only when asked for
 * (`Fields=Path`) and absent on virtual items (a Jellyfin season made up for episodes lying in the show's folder);
 * `TotalRecordCount` tells whether a page was the last.
 */
const ItemsPage = v.looseObject({
  Items: v.nullish(
    v.array(
      v.looseObject({
        Id: v.string(),
        Name: v.nullish(v.string()),
        Type: v.nullish(v.string()),
        Path: v.nullish(v.string()),
        IsFolder: v.nullish(v.boolean()),
      }),
    ),
  ),
  TotalRecordCount: v.nullish(v.number()),
});

export interface LibraryItem {
  readonly id: string;
  readonly type?: string;
  readonly path?: string;
  /** `false` only when the server says the item holds nothing (an episode, a movie). */
  readonly isFolder?: boolean;
}

export interface LibraryItemsPage {
  readonly items: LibraryItem[];
  /** Every child of the parent, over all pages; absent when the server did not say. */
  readonly total?: number;
}

export function parseLibraryItems(body: string, what: string): LibraryItemsPage {
  const page = parseBody(body, ItemsPage, what);
  const items = (page.Items ?? []).map((item) => ({
    id: item.Id,
    ...(item.Type ? { type: item.Type } : {}),
    ...(item.Path ? { path: item.Path } : {}),
    ...(typeof item.IsFolder === "boolean" ? { isFolder: item.IsFolder } : {}),
  }));
  return { items, ...(typeof page.TotalRecordCount === "number" ? { total: page.TotalRecordCount } : {}) };
}

/** `GET /Plugins` (both servers): the installed plugins, `Id` as the server writes a GUID (Jellyfin without dashes). */
const PluginList = v.array(
  v.looseObject({
    Name: v.nullish(v.string()),
    Id: v.nullish(v.string()),
    Version: v.nullish(v.string()),
    Status: v.nullish(v.string()),
  }),
);

export interface InstalledPlugin {
  readonly name: string;
  readonly id: string;
  readonly version?: string;
  /** Jellyfin's `Active`, `Disabled`, `NotSupported`, `Malfunctioned` …; Emby does not say. */
  readonly status?: string;
}

export function parsePlugins(body: string, what: string): InstalledPlugin[] {
  return parseBody(body, PluginList, what).map((plugin) => ({
    name: plugin.Name ?? "",
    id: plugin.Id ?? "",
    ...(plugin.Version ? { version: plugin.Version } : {}),
    ...(plugin.Status ? { status: plugin.Status } : {}),
  }));
}

/**
 * The targeted-scans plugin's answer to `POST /Library/ScanPath`: `{ItemId, ItemName, Status, Path, Message}`.
 * `undefined` when the body is not that shape (a 404 page of a server without the plugin).
 */
const ScanPathAnswer = v.looseObject({ Status: v.string(), Path: v.nullish(v.string()), Message: v.nullish(v.string()), ItemName: v.nullish(v.string()) });

export interface ScanPathAnswer {
  readonly status: string;
  /** The path the outcome is for (absent when the server did not say). */
  readonly path?: string;
  readonly message?: string;
  readonly itemName?: string;
}

export function parseScanPathAnswer(body: string): ScanPathAnswer | undefined {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return undefined;
  }
  const result = v.safeParse(ScanPathAnswer, json);
  if (!result.success) return undefined;
  return scanPathResult(result.output);
}

function scanPathResult(answer: v.InferOutput<typeof ScanPathAnswer>): ScanPathAnswer {
  const { Status, Path, Message, ItemName } = answer;
  return { status: Status, ...(Path ? { path: Path } : {}), ...(Message ? { message: Message } : {}), ...(ItemName ? { itemName: ItemName } : {}) };
}

/** `POST /Library/ScanPaths` (the plugin's batch route): `{Results: [{ItemId, ItemName, Status, Path, Message}]}`, each with its `Path`. */
const ScanPathsAnswer = v.looseObject({ Results: v.array(v.looseObject({ ...ScanPathAnswer.entries, Path: v.string() })) });

export function parseScanPathsAnswer(body: string): (ScanPathAnswer & { readonly path: string })[] | undefined {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return undefined;
  }
  const result = v.safeParse(ScanPathsAnswer, json);
  if (!result.success) return undefined;
  return result.output.Results.map((entry) => ({ ...scanPathResult(entry), path: entry.Path }));
}

/** A media server's JSON answer read against `schema`; what is wrong with it named (`what`: the call). */
export function parseBody<S extends v.GenericSchema>(body: string, schema: S, what: string): v.InferOutput<S> {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    throw new MediaHttpError(`${what}: the answer is not JSON (is the URL right?)`, 200);
  }
  const result = v.safeParse(schema, json);
  if (!result.success) {
    const issue = result.issues[0];
    const where = issue ? v.getDotPath(issue) : undefined;
    throw new MediaHttpError(`${what}: unexpected answer${where ? ` at ${where}` : ""}: ${issue?.message ?? "invalid"}`, 200);
  }
  return result.output;
}
