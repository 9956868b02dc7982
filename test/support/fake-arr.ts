import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

/**
 * A fake Sonarr (v3 or v4), Radarr, Lidarr or Readarr history API on 127.0.0.1, faithful to
 * ../shared/reference/arr-history.md (every behaviour below cites its section):
 * - API root `/api/v3` (Sonarr, Radarr) or `/api/v1` (Lidarr, Readarr) (§1);
 * - `GET …/history`: `{page,pageSize,sortKey,sortDirection,totalRecords,records}`, page 1 and 10 records by default,
 *   `date` descending by default, the sort keys each app allows (Sonarr v4: `date`, `series.sortTitle`, any other →
 *   `date`; Radarr: `date`, `languages`, `movieMetadata.sortTitle`, `quality`, others → `date`; Lidarr, Readarr and
 *   Sonarr v3 pass the key to SQL: `date`, `id` work, an unknown column is a 500), one sort column and no tie-breaker
 *   (records of the same instant come in a scrambled, stable order), `eventType` (numbers; v4-era repeatable, v3 one
 *   value) and `downloadId` filters, and the include flags (`includeSeries` …) (§2);
 * - Sonarr v3: a `sortKey` without `sortDirection` sorts ascending, `sortDir=asc` works, `page=0`/`pageSize=0` fall
 *   back to 1 and 10 (§2);
 * - `GET …/history/since?date=`: a plain array, ascending, unpaged (streamed, so 100,000 records stay cheap); v3
 *   answers 400 without `date`, v4-era apps return the whole history (§2);
 * - `GET …/system/status` (`appName`, `version` …) and `X-Application-Version` on every answer (§1);
 * - the key: v4-era: `apikey` query (any case, checked first), then `X-Api-Key`, then `Authorization: Bearer`; a
 *   missing or wrong key is 401 with an empty body. Sonarr v3: `X-Api-Key` first, then the `ApiKey` query (any
 *   case), 401 `{"error":"Unauthorized"}` (§1);
 * - records: camelCase `eventType` strings with the app's own numbers for filters (§3), `data` a string → string
 *   dictionary with camelCased keys, nulls omitted, `sourceTitle` = the deleted file for deletes and the old path
 *   for renames, `downloadId` only on grabs and imports, dates in whole seconds (v4-era) or with fractions (Sonarr
 *   v3), the database keeping sub-second precision for the sort (§4); Sonarr and Lidarr write one import record per
 *   episode or track of a file (`items`);
 * - switches: starting up (503 with the app's `errorMessage`), down (the port is closed: connection refused, then
 *   reopened on the same port), hung (requests never answered), a new key, and injected answers (`answerNext`).
 */

export type FakeArrType = "sonarr" | "radarr" | "lidarr" | "readarr";

export interface FakeArrOptions {
  readonly type: FakeArrType;
  /** Sonarr only: v4 (ASP.NET Core, default) or v3 (Nancy). */
  readonly sonarrVersion?: "v3" | "v4";
  readonly apiKey?: string;
  /** The app's root folder: relative paths given to `add…` are under it. Default `/tv`, `/movies`, `/music`, `/books`. */
  readonly pathRoot?: string;
  /** The version `system/status` and `X-Application-Version` report. */
  readonly version?: string;
}

export interface FakeArrRequest {
  readonly method: string;
  readonly path: string;
  readonly rawQuery: string;
  readonly query: URLSearchParams;
  readonly headers: IncomingMessage["headers"];
}

/** When a record was written: a Date, an ISO string or ms since the epoch. Default: now. */
export type FakeDate = Date | string | number;

export interface FakeImport {
  /** The imported file (absolute, or relative to `pathRoot`). */
  readonly path: string;
  readonly date?: FakeDate;
  /** `data.fileId`; default: a new id per call. */
  readonly fileId?: number;
  readonly downloadId?: string;
  /** The file in the download folder (`data.droppedPath`). */
  readonly droppedPath?: string;
  /** Sonarr and Lidarr: records for this one file (a multi-episode file). Default 1. */
  readonly items?: number;
}
export interface FakeRename {
  readonly from: string;
  readonly to: string;
  readonly date?: FakeDate;
  readonly fileId?: number;
}
export interface FakeDelete {
  readonly path: string;
  /** `MissingFromDisk`, `Manual` (default), `Upgrade`, … */
  readonly reason?: string;
  readonly date?: FakeDate;
}
export interface FakeGrab {
  readonly title?: string;
  readonly downloadId?: string;
  readonly date?: FakeDate;
}
/** Any other event, by its camelCase name (`downloadFailed`, `trackFileRetagged` …). */
export interface FakeOther {
  readonly eventType: string;
  readonly sourceTitle?: string;
  readonly data?: Readonly<Record<string, string>>;
  readonly downloadId?: string;
  readonly date?: FakeDate;
}

export type FakeRecordInput =
  | ({ readonly kind: "import" } & FakeImport)
  | ({ readonly kind: "rename" } & FakeRename)
  | ({ readonly kind: "delete" } & FakeDelete)
  | ({ readonly kind: "grab" } & FakeGrab)
  | ({ readonly kind: "other" } & FakeOther);

export interface FakeReply {
  readonly status: number;
  readonly body?: string;
  readonly contentType?: string;
}

export interface FakeArr {
  readonly url: string;
  readonly port: number;
  readonly type: FakeArrType;
  readonly appName: string;
  readonly apiRoot: string;
  readonly apiKey: string;
  readonly version: string;
  readonly requests: FakeArrRequest[];
  /** How many records the history holds. */
  readonly size: number;
  /** Returns the new records' ids (more than one for a multi-episode Sonarr file or `items`). */
  addImport(input: FakeImport): number[];
  addRename(input: FakeRename): number;
  addDelete(input: FakeDelete): number;
  addGrab(input?: FakeGrab): number;
  addOther(input: FakeOther): number;
  /** `n` records made by `make(index)`; cheap enough for 100,000. Returns the first and last ids. */
  addMany(n: number, make: (index: number) => FakeRecordInput): { first: number; last: number };
  /** Drops every record of the series/movie/artist/author whose folder holds `path` (what deleting the item does). */
  deleteItem(path: string): number;
  /** 503 `{"errorMessage":"<App> is starting up, please try again later"}` to every request while true. */
  setStarting(starting: boolean): void;
  /** true: the port is closed (connection refused) and open connections are cut; false: it listens again. */
  setDown(down: boolean): Promise<void>;
  setKey(apiKey: string): void;
  /** true: requests are taken but never answered (a hung app), until false or close. */
  setHang(hang: boolean): void;
  /** History pages from `page` on are taken but never answered (a read cut in the middle); undefined: answered. */
  hangFromPage(page: number | undefined): void;
  /** The next `times` requests whose `METHOD /path` matches get this answer instead (after the key check). */
  answerNext(match: RegExp, reply: FakeReply, times?: number): void;
  close(): Promise<void>;
}

interface AppFacts {
  readonly appName: string;
  readonly apiRoot: string;
  readonly defaultVersion: string;
  readonly defaultRoot: string;
  /** number → camelCase name (§3). */
  readonly events: Readonly<Record<number, string>>;
  readonly importEvent: number;
  readonly renameEvent: number;
  readonly deleteEvent: number;
  /** The record's id fields (§4) and the include flag that embeds the item. */
  readonly itemKey: "series" | "movie" | "artist" | "author";
  readonly itemIdField: string;
  readonly subIdField: string | undefined;
  readonly perItemImports: boolean;
}

const FACTS: Readonly<Record<FakeArrType, AppFacts>> = {
  sonarr: {
    appName: "Sonarr",
    apiRoot: "/api/v3",
    defaultVersion: "4.0.14.2939",
    defaultRoot: "/tv",
    events: {
      0: "unknown",
      1: "grabbed",
      2: "seriesFolderImported",
      3: "downloadFolderImported",
      4: "downloadFailed",
      5: "episodeFileDeleted",
      6: "episodeFileRenamed",
      7: "downloadIgnored",
    },
    importEvent: 3,
    renameEvent: 6,
    deleteEvent: 5,
    itemKey: "series",
    itemIdField: "seriesId",
    subIdField: "episodeId",
    perItemImports: true,
  },
  radarr: {
    appName: "Radarr",
    apiRoot: "/api/v3",
    defaultVersion: "6.0.4.10291",
    defaultRoot: "/movies",
    events: {
      0: "unknown",
      1: "grabbed",
      3: "downloadFolderImported",
      4: "downloadFailed",
      6: "movieFileDeleted",
      7: "movieFolderImported",
      8: "movieFileRenamed",
      9: "downloadIgnored",
    },
    importEvent: 3,
    renameEvent: 8,
    deleteEvent: 6,
    itemKey: "movie",
    itemIdField: "movieId",
    subIdField: undefined,
    perItemImports: false,
  },
  lidarr: {
    appName: "Lidarr",
    apiRoot: "/api/v1",
    defaultVersion: "2.14.5.4836",
    defaultRoot: "/music",
    events: {
      0: "unknown",
      1: "grabbed",
      2: "artistFolderImported",
      3: "trackFileImported",
      4: "downloadFailed",
      5: "trackFileDeleted",
      6: "trackFileRenamed",
      7: "albumImportIncomplete",
      8: "downloadImported",
      9: "trackFileRetagged",
      10: "downloadIgnored",
    },
    importEvent: 3,
    renameEvent: 6,
    deleteEvent: 5,
    itemKey: "artist",
    itemIdField: "artistId",
    subIdField: "trackId",
    perItemImports: true,
  },
  readarr: {
    appName: "Readarr",
    apiRoot: "/api/v1",
    defaultVersion: "0.3.22.2499",
    defaultRoot: "/books",
    events: {
      0: "unknown",
      1: "grabbed",
      3: "bookFileImported",
      4: "downloadFailed",
      5: "bookFileDeleted",
      6: "bookFileRenamed",
      7: "bookImportIncomplete",
      8: "downloadImported",
      9: "bookFileRetagged",
      10: "downloadIgnored",
    },
    importEvent: 3,
    renameEvent: 6,
    deleteEvent: 5,
    itemKey: "author",
    itemIdField: "authorId",
    subIdField: "bookId",
    perItemImports: false,
  },
};

const SONARR_V3_VERSION = "3.0.10.1567";

/** One history row as the app's database holds it: PascalCase `Data` keys, sub-second dates (100 ns ticks). */
interface Row {
  readonly id: number;
  readonly ms: number;
  /** 0–9999: the 100 ns ticks within the millisecond (.NET keeps 7 digits). */
  readonly ticks: number;
  readonly eventType: number;
  readonly itemId: number;
  readonly subId: number;
  readonly sourceTitle: string;
  readonly downloadId: string | undefined;
  readonly data: Readonly<Record<string, string | undefined>>;
}

interface Item {
  readonly id: number;
  readonly folder: string;
  readonly title: string;
}

type Reply = FakeReply & { readonly stream?: (res: ServerResponse) => void };

const JSON_TYPE = "application/json; charset=utf-8";

export async function startFakeArr(options: FakeArrOptions): Promise<FakeArr> {
  const facts = FACTS[options.type];
  const v3 = options.type === "sonarr" && options.sonarrVersion === "v3";
  const version = options.version ?? (v3 ? SONARR_V3_VERSION : facts.defaultVersion);
  const root = (options.pathRoot ?? facts.defaultRoot).replace(/\/+$/, "");
  let apiKey = options.apiKey ?? "fakearrkey0123456789abcdef0123456";
  let starting = false;
  let hang = false;
  let hangPage: number | undefined;
  const held: ServerResponse[] = [];
  const rows: Row[] = [];
  const items = new Map<string, Item>();
  const itemsById = new Map<number, Item>();
  const requests: FakeArrRequest[] = [];
  const injected: { match: RegExp; reply: FakeReply; times: number }[] = [];
  let nextFileId = 1;
  let nextSubId = 1;
  let lastDefault = { ms: 0, ticks: 0 };
  let sorted: { key: string; rows: Row[] } | undefined;

  // ---- records -------------------------------------------------------------------------------------------------

  function absolute(path: string): string {
    return path.startsWith("/") || /^[A-Za-z]:[\\/]|^\\\\/.test(path) ? path : `${root}/${path}`;
  }

  /** The series/movie/artist/author a path belongs to: the first folder under the root (else the file's folder). */
  function itemOf(path: string): Item {
    const folder = path.startsWith(`${root}/`) ? `${root}/${path.slice(root.length + 1).split("/")[0]}` : dirname(path);
    let item = items.get(folder);
    if (!item) {
      item = { id: items.size + 1, folder, title: folder.slice(folder.lastIndexOf("/") + 1) };
      items.set(folder, item);
      itemsById.set(item.id, item);
    }
    return item;
  }

  /** A given date is kept to the millisecond; a default one is "now", strictly later than the last default. */
  function when(date: FakeDate | undefined): { ms: number; ticks: number } {
    if (date !== undefined) {
      const ms = date instanceof Date ? date.getTime() : typeof date === "number" ? date : Date.parse(date);
      if (!Number.isFinite(ms)) throw new Error(`fake-arr: bad date ${String(date)}`);
      return { ms, ticks: 0 };
    }
    const now = Date.now();
    const next =
      now > lastDefault.ms
        ? { ms: now, ticks: 0 }
        : lastDefault.ticks < 9999
          ? { ms: lastDefault.ms, ticks: lastDefault.ticks + 1 }
          : { ms: lastDefault.ms + 1, ticks: 0 };
    lastDefault = next;
    return next;
  }

  function push(row: Omit<Row, "id">): number {
    const id = rows.length === 0 ? 1 : (rows[rows.length - 1]?.id ?? 0) + 1;
    rows.push({ ...row, id });
    sorted = undefined;
    return id;
  }

  function relativeTo(item: Item, path: string): string | undefined {
    return path.startsWith(`${item.folder}/`) ? path.slice(item.folder.length + 1) : undefined;
  }

  function addImport(input: FakeImport): number[] {
    const path = absolute(input.path);
    const item = itemOf(path);
    const count = input.items ?? 1;
    if (count > 1 && !facts.perItemImports) throw new Error(`fake-arr: ${facts.appName} writes one import record per file`);
    const fileId = String(input.fileId ?? nextFileId++);
    const at = when(input.date);
    const downloadId = input.downloadId ?? `SABnzbd_nzo_${fileId}`;
    const fileName = path.slice(path.lastIndexOf("/") + 1);
    const data: Record<string, string | undefined> = {
      FileId: fileId,
      DroppedPath: input.droppedPath ?? `/downloads/complete/${fileName}`,
      ImportedPath: path,
      DownloadClient: "SABnzbd",
      DownloadClientName: options.type === "lidarr" ? undefined : "SABnzbd",
      ReleaseGroup: "GROUP",
    };
    if (v3) data.PreferredWordScore = "0";
    else {
      data.Size = "1234567890";
      data.IndexerFlags = "0";
      if (options.type === "sonarr" || options.type === "radarr") data.CustomFormatScore = "0";
      if (options.type === "sonarr") data.ReleaseType = "singleEpisode";
    }
    const ids: number[] = [];
    for (let index = 0; index < count; index += 1) {
      ids.push(
        push({
          ...at,
          eventType: facts.importEvent,
          itemId: item.id,
          subId: nextSubId++,
          sourceTitle: fileName.replace(/\.[^.]+$/, ""),
          downloadId,
          data,
        }),
      );
    }
    return ids;
  }

  function addRename(input: FakeRename): number {
    const from = absolute(input.from);
    const to = absolute(input.to);
    const item = itemOf(to);
    const data: Record<string, string | undefined> = { SourcePath: from, Path: to };
    if (options.type === "sonarr" || options.type === "radarr") {
      data.SourceRelativePath = relativeTo(item, from);
      data.RelativePath = relativeTo(item, to);
    }
    data.ReleaseGroup = "GROUP";
    if (!v3) {
      data.Size = "1234567890";
      data.IndexerFlags = "0";
    }
    return push({ ...when(input.date), eventType: facts.renameEvent, itemId: item.id, subId: nextSubId++, sourceTitle: from, downloadId: undefined, data });
  }

  function addDelete(input: FakeDelete): number {
    const path = absolute(input.path);
    const item = itemOf(path);
    const data = { Reason: input.reason ?? "Manual", ReleaseGroup: "GROUP", Size: v3 ? undefined : "1234567890" };
    return push({ ...when(input.date), eventType: facts.deleteEvent, itemId: item.id, subId: nextSubId++, sourceTitle: path, downloadId: undefined, data });
  }

  function addGrab(input: FakeGrab = {}): number {
    const item = itemOf(`${root}/Grabbed`);
    const downloadId = input.downloadId ?? `SABnzbd_nzo_grab${rows.length + 1}`;
    const data = {
      Indexer: "NZBgeek",
      NzbInfoUrl: "https://nzbgeek.example/details/1",
      ReleaseGroup: "GROUP",
      Age: "0",
      PublishedDate: new Date(0).toISOString(),
      DownloadClient: "SABnzbd",
      DownloadUrl: "https://nzbgeek.example/get/1",
      Guid: `guid-${rows.length + 1}`,
      Protocol: "1",
    };
    const title = input.title ?? "Some.Release.1080p.WEB-DL-GROUP";
    return push({ ...when(input.date), eventType: 1, itemId: item.id, subId: nextSubId++, sourceTitle: title, downloadId, data });
  }

  function addOther(input: FakeOther): number {
    const entry = Object.entries(facts.events).find(([, name]) => name === input.eventType);
    if (!entry) throw new Error(`fake-arr: ${facts.appName} has no event '${input.eventType}'`);
    const item = itemOf(`${root}/Other`);
    const data = Object.fromEntries(Object.entries(input.data ?? {}).map(([key, value]) => [key.charAt(0).toUpperCase() + key.slice(1), value]));
    return push({
      ...when(input.date),
      eventType: Number(entry[0]),
      itemId: item.id,
      subId: nextSubId++,
      sourceTitle: input.sourceTitle ?? "Some.Release.1080p.WEB-DL-GROUP",
      downloadId: input.downloadId,
      data,
    });
  }

  function add(input: FakeRecordInput): number {
    switch (input.kind) {
      case "import":
        return addImport(input).at(-1) ?? 0;
      case "rename":
        return addRename(input);
      case "delete":
        return addDelete(input);
      case "grab":
        return addGrab(input);
      case "other":
        return addOther(input);
    }
  }

  // ---- reading -------------------------------------------------------------------------------------------------

  /** The date column's order, with no tie-breaker: rows of the same instant in a stable but scrambled order. */
  function byDate(direction: 1 | -1): Row[] {
    const key = `date:${direction}`;
    if (sorted?.key === key) return sorted.rows;
    const out = rows.slice().sort((a, b) => direction * (a.ms - b.ms || a.ticks - b.ticks || scramble(a.id) - scramble(b.id)));
    sorted = { key, rows: out };
    return out;
  }

  function ordered(sortKey: string, direction: 1 | -1): Row[] {
    if (sortKey === "date") return byDate(direction);
    if (sortKey === "id") return direction === 1 ? rows : rows.slice().reverse();
    // A title or a quality: every fake row shares the quality and language, so those keys tie throughout.
    const title = (row: Row): string => (sortKey.endsWith("sortTitle") ? itemById(row.itemId)?.title.toLowerCase() ?? "" : "");
    return rows.slice().sort((a, b) => direction * (title(a).localeCompare(title(b)) || scramble(a.id) - scramble(b.id)));
  }

  function itemById(id: number): Item | undefined {
    return itemsById.get(id);
  }

  function formatDate(row: Row): string {
    const iso = new Date(row.ms).toISOString();
    // v4-era: `yyyy-MM-ddTHH:mm:ssZ` (STJUtcConverter). v3 (Newtonsoft): up to 7 fraction digits, zeros trimmed.
    if (!v3) return `${iso.slice(0, 19)}Z`;
    const fraction = `${iso.slice(20, 23)}${String(row.ticks).padStart(4, "0")}`.replace(/0+$/, "");
    return fraction ? `${iso.slice(0, 19)}.${fraction}Z` : `${iso.slice(0, 19)}Z`;
  }

  function toJson(row: Row, include: boolean): string {
    const data: Record<string, string> = {};
    for (const [key, value] of Object.entries(row.data)) if (value !== undefined && value !== null) data[key.charAt(0).toLowerCase() + key.slice(1)] = value;
    const quality = { quality: { id: 7, name: "Bluray-1080p", source: "bluray", resolution: 1080 }, revision: { version: 1, real: 0, isRepack: false } };
    const out: Record<string, unknown> = {};
    if (facts.subIdField) out[facts.subIdField] = row.subId;
    if (options.type === "lidarr") out.albumId = row.itemId * 100;
    out[facts.itemIdField] = row.itemId;
    out.sourceTitle = row.sourceTitle;
    if (v3) {
      out.language = { id: 1, name: "English" };
      out.quality = quality;
      out.qualityCutoffNotMet = false;
      out.languageCutoffNotMet = false;
    } else {
      if (options.type === "sonarr" || options.type === "radarr") out.languages = [{ id: 1, name: "English" }];
      out.quality = quality;
      out.customFormats = [];
      out.customFormatScore = 0;
      out.qualityCutoffNotMet = false;
    }
    out.date = formatDate(row);
    if (row.downloadId !== undefined) out.downloadId = row.downloadId;
    out.eventType = facts.events[row.eventType] ?? "unknown";
    out.data = data;
    if (include) {
      const item = itemById(row.itemId);
      if (item) out[facts.itemKey] = { id: item.id, title: item.title, sortTitle: item.title.toLowerCase(), path: item.folder };
    }
    out.id = row.id;
    return JSON.stringify(out);
  }

  function includeFlag(query: URLSearchParams): boolean {
    const flag = `include${facts.itemKey.charAt(0).toUpperCase()}${facts.itemKey.slice(1)}`;
    return (getCi(query, flag) ?? "").toLowerCase() === "true";
  }

  /** `eventType` numbers: v4-era a repeatable int array, Sonarr v3 one value (`Convert.ToInt32`). */
  function eventFilter(query: URLSearchParams): { types: Set<number> | undefined } | Reply {
    const values = allCi(query, "eventType");
    if (values.length === 0) return { types: undefined };
    if (v3 && values.length > 1) return { status: 500, body: JSON.stringify({ message: "Input string was not in a correct format." }), contentType: JSON_TYPE };
    const numbers = values.map((value) => (/^-?\d+$/.test(value) ? Number(value) : Number.NaN));
    if (numbers.some((n) => Number.isNaN(n))) {
      return v3
        ? { status: 500, body: JSON.stringify({ message: "Input string was not in a correct format." }), contentType: JSON_TYPE }
        : validationProblem("eventType", `The value '${values.find((value) => !/^-?\d+$/.test(value)) ?? ""}' is not valid.`);
    }
    return { types: new Set(numbers) };
  }

  function history(query: URLSearchParams): Reply {
    const page = intParam(query, "page");
    const size = intParam(query, "pageSize");
    const pageNumber = page === undefined || (v3 && page <= 0) ? 1 : page;
    const pageSize = size === undefined || (v3 && size <= 0) ? 10 : size;
    const sort = sortOf(query);
    if ("status" in sort) return sort;
    const filter = eventFilter(query);
    if ("status" in filter) return filter;
    const downloadId = getCi(query, "downloadId");
    let list = ordered(sort.key, sort.direction);
    if (filter.types || downloadId !== undefined) {
      list = list.filter((row) => (!filter.types || filter.types.has(row.eventType)) && (downloadId === undefined || row.downloadId === downloadId));
    }
    const include = includeFlag(query);
    const start = Math.max(0, (pageNumber - 1) * pageSize);
    const slice = pageSize > 0 ? list.slice(start, start + pageSize) : [];
    const head = JSON.stringify({
      page: pageNumber,
      pageSize,
      sortKey: sort.key,
      sortDirection: sort.direction === 1 ? "ascending" : "descending",
      totalRecords: list.length,
    });
    const records = slice.map((row) => toJson(row, include)).join(",");
    return { status: 200, contentType: JSON_TYPE, body: `${head.slice(0, -1)},"records":[${records}]}` };
  }

  /** The sort each app and version applies to the query (§2). */
  function sortOf(query: URLSearchParams): { key: string; direction: 1 | -1 } | Reply {
    const key = getCi(query, "sortKey");
    const rawDirection = (getCi(query, "sortDirection") ?? "").toLowerCase();
    const direction: 1 | -1 | undefined = rawDirection === "ascending" ? 1 : rawDirection === "descending" ? -1 : undefined;
    if (v3) {
      if (key === undefined) return { key: "date", direction: -1 };
      const legacy = (getCi(query, "sortDir") ?? "").toLowerCase();
      const v3Direction = direction ?? (legacy === "desc" ? -1 : 1);
      if (!["date", "id", "series.sortTitle", "eventType"].includes(key)) return sqlError(key);
      return { key, direction: v3Direction };
    }
    const allowed: Record<FakeArrType, readonly string[] | undefined> = {
      sonarr: ["date", "series.sortTitle"],
      radarr: ["date", "languages", "movieMetadata.sortTitle", "quality"],
      lidarr: undefined,
      readarr: undefined,
    };
    const list = allowed[options.type];
    if (list) return { key: key !== undefined && list.includes(key) ? key : "date", direction: direction ?? -1 };
    if (key === undefined) return { key: "date", direction: direction ?? -1 };
    if (key !== "date" && key !== "id") return sqlError(key);
    return { key, direction: direction ?? -1 };
  }

  function since(query: URLSearchParams): Reply {
    const raw = getCi(query, "date");
    if (raw === undefined && v3) return { status: 400, body: JSON.stringify({ message: "date is missing" }), contentType: JSON_TYPE };
    const from = raw === undefined ? Number.NEGATIVE_INFINITY : Date.parse(/(Z|[+-]\d{2}:?\d{2})$/.test(raw) ? raw : `${raw}Z`);
    if (Number.isNaN(from)) return validationProblem("date", `The value '${raw ?? ""}' is not valid.`);
    const eventValue = getCi(query, "eventType");
    let eventType: number | undefined;
    if (eventValue !== undefined) {
      const byName = Object.entries(facts.events).find(([, name]) => name.toLowerCase() === eventValue.toLowerCase());
      eventType = /^\d+$/.test(eventValue) ? Number(eventValue) : !v3 && byName ? Number(byName[0]) : Number.NaN;
      if (Number.isNaN(eventType)) return validationProblem("eventType", `The value '${eventValue}' is not valid.`);
    }
    const include = includeFlag(query);
    const list = byDate(1);
    return {
      status: 200,
      contentType: JSON_TYPE,
      // Streamed a thousand records at a time: the whole history is never one string.
      stream(res) {
        let index = 0;
        let first = true;
        res.write("[");
        const writeSome = (): void => {
          let chunk = "";
          for (let n = 0; n < 1000 && index < list.length; index += 1) {
            const row = list[index];
            if (!row || row.ms < from || (eventType !== undefined && row.eventType !== eventType)) continue;
            chunk += (first ? "" : ",") + toJson(row, include);
            first = false;
            n += 1;
          }
          if (index >= list.length) return void res.end(`${chunk}]`);
          if (res.write(chunk)) setImmediate(writeSome);
          else res.once("drain", writeSome);
        };
        writeSome();
      },
    };
  }

  function status(): Reply {
    const body = {
      appName: facts.appName,
      instanceName: facts.appName,
      version,
      buildTime: "2026-01-01T00:00:00Z",
      isDebug: false,
      isProduction: true,
      isAdmin: false,
      isUserInteractive: false,
      startupPath: `/app/${facts.appName.toLowerCase()}/bin`,
      appData: "/config",
      osName: "ubuntu",
      isDocker: true,
      isLinux: true,
      branch: v3 ? "main" : options.type === "readarr" ? "develop" : "main",
      authentication: "forms",
      urlBase: "",
      startTime: new Date(started).toISOString().replace(/\.\d+Z$/, "Z"),
    };
    return { status: 200, contentType: JSON_TYPE, body: JSON.stringify(body) };
  }

  // ---- HTTP ----------------------------------------------------------------------------------------------------

  function givenKey(req: FakeArrRequest): string | undefined {
    const header = headerText(req.headers["x-api-key"]);
    const query = getCi(req.query, "apikey");
    if (v3) return header ?? query;
    const bearer = /^Bearer\s+(.+)$/i.exec(headerText(req.headers.authorization) ?? "")?.[1];
    return query ?? header ?? bearer;
  }

  function route(req: FakeArrRequest): Reply {
    // The start-up middleware comes before authentication (Startup.cs).
    if (starting) {
      return { status: 503, contentType: JSON_TYPE, body: JSON.stringify({ errorMessage: `${facts.appName} is starting up, please try again later` }) };
    }
    if (!req.path.startsWith("/api/")) return { status: 404, body: "" };
    if (givenKey(req) !== apiKey) {
      return v3 ? { status: 401, contentType: JSON_TYPE, body: JSON.stringify({ error: "Unauthorized" }) } : { status: 401, body: "" };
    }
    const injection = injected.find((entry) => entry.times > 0 && entry.match.test(`${req.method} ${req.path}`));
    if (injection) {
      injection.times -= 1;
      return injection.reply;
    }
    if (req.method !== "GET") return { status: 405, body: "" };
    const path = req.path.replace(/\/+$/, "");
    if (path === `${facts.apiRoot}/system/status`) return status();
    if (path === `${facts.apiRoot}/history`) return history(req.query);
    if (path === `${facts.apiRoot}/history/since`) return since(req.query);
    return { status: 404, body: "" };
  }

  function send(res: ServerResponse, reply: Reply): void {
    res.statusCode = reply.status;
    res.setHeader("X-Application-Version", version);
    if (reply.contentType) res.setHeader("Content-Type", reply.contentType);
    if (reply.stream) return reply.stream(res);
    res.setHeader("Content-Length", Buffer.byteLength(reply.body ?? ""));
    res.end(reply.body ?? "");
  }

  const started = Date.now();
  const sockets = new Set<Socket>();
  const server = createServer((incoming, res) => {
    const url = new URL(incoming.url ?? "/", "http://127.0.0.1");
    const req: FakeArrRequest = {
      method: incoming.method ?? "GET",
      path: url.pathname,
      rawQuery: (incoming.url ?? "").split("?")[1] ?? "",
      query: url.searchParams,
      headers: incoming.headers,
    };
    requests.push(req);
    incoming.resume();
    if (hang) return void held.push(res);
    const page = Number(url.searchParams.get("page") ?? "1");
    if (hangPage !== undefined && /\/history$/i.test(url.pathname) && page >= hangPage) return void held.push(res);
    send(res, route(req));
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  await listen(0);
  const port = (server.address() as AddressInfo).port;
  let listening = true;

  function listen(on: number): Promise<void> {
    return new Promise((resolve, reject) => {
      server.once("error", reject);
      server.listen(on, "127.0.0.1", () => {
        server.off("error", reject);
        resolve();
      });
    });
  }

  function stop(): Promise<void> {
    if (!listening) return Promise.resolve();
    listening = false;
    return new Promise((resolve) => {
      server.close(() => resolve());
      for (const socket of sockets) socket.destroy();
    });
  }

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    type: options.type,
    appName: facts.appName,
    apiRoot: facts.apiRoot,
    get apiKey() {
      return apiKey;
    },
    version,
    requests,
    get size() {
      return rows.length;
    },
    addImport,
    addRename,
    addDelete,
    addGrab,
    addOther,
    addMany(n, make) {
      const first = rows.length === 0 ? 1 : (rows[rows.length - 1]?.id ?? 0) + 1;
      for (let index = 0; index < n; index += 1) add(make(index));
      return { first, last: rows.length === 0 ? 0 : (rows[rows.length - 1]?.id ?? 0) };
    },
    deleteItem(path) {
      const item = itemOf(absolute(path));
      const before = rows.length;
      const kept = rows.filter((row) => row.itemId !== item.id);
      rows.length = 0;
      rows.push(...kept);
      sorted = undefined;
      return before - rows.length;
    },
    setStarting: (value) => void (starting = value),
    async setDown(down) {
      if (down) return stop();
      if (listening) return;
      await listen(port);
      listening = true;
    },
    setKey: (value) => void (apiKey = value),
    setHang(value) {
      hang = value;
      if (!value) for (const res of held.splice(0)) res.destroy();
    },
    hangFromPage(page) {
      hangPage = page;
      if (page === undefined) for (const res of held.splice(0)) res.destroy();
    },
    answerNext: (match, reply, times = 1) => void injected.push({ match, reply, times }),
    close: stop,
  };
}

/** ASP.NET Core's answer to a query value that does not bind (a name where an int is expected) (unverified). */
function validationProblem(field: string, message: string): Reply {
  const body = {
    type: "https://tools.ietf.org/html/rfc9110#section-15.5.1",
    title: "One or more validation errors occurred.",
    status: 400,
    errors: { [field]: [message] },
  };
  return { status: 400, contentType: "application/problem+json; charset=utf-8", body: JSON.stringify(body) };
}

/** An unknown sort column passed through to SQL (Lidarr, Readarr, Sonarr v3): a 500 (unverified). */
function sqlError(key: string): Reply {
  return { status: 500, contentType: JSON_TYPE, body: JSON.stringify({ message: `SQLite error no such column: ${key}` }) };
}

/** A stable, well-mixed number per id: the order of rows that tie on the sort column. */
function scramble(id: number): number {
  let x = Math.imul(id ^ 0x9e3779b9, 0x85ebca6b);
  x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35);
  return (x ^ (x >>> 16)) >>> 0;
}

function getCi(query: URLSearchParams, name: string): string | undefined {
  const wanted = name.toLowerCase();
  for (const [key, value] of query) if (key.toLowerCase() === wanted) return value;
  return undefined;
}

function allCi(query: URLSearchParams, name: string): string[] {
  const wanted = name.toLowerCase();
  return [...query].filter(([key]) => key.toLowerCase() === wanted).map(([, value]) => value);
}

function intParam(query: URLSearchParams, name: string): number | undefined {
  const value = getCi(query, name);
  return value !== undefined && /^-?\d+$/.test(value) ? Number(value) : undefined;
}

function headerText(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function dirname(path: string): string {
  const cut = path.lastIndexOf("/");
  return cut <= 0 ? "/" : path.slice(0, cut);
}
