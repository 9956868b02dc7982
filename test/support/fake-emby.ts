import { createHash } from "node:crypto";
import { createFakeLibrary, type FakeLibrary } from "./fake-library.ts";
import { createFakeTargetedScan, type FakeTargetedScan, type FakeTargetedScanOptions } from "./fake-targeted-scan.ts";
import {
  itemRefreshReply,
  itemsReply,
  parseAuthParams,
  startFakeHttpServer,
  type FakeHttpServer,
  type HttpReply,
  type ItemRefreshCall,
  type RecordedHttpRequest,
} from "./fake-media-server.ts";

/**
 * A fake Emby server on 127.0.0.1, faithful to the points of ../shared/reference/integrations.md §4.2:
 * - auth: the `X-Emby-Token` header, the `api_key` query, or `X-Emby-Authorization`/`Authorization` with the
 *   `Emby … Token="…"` scheme; a bad or missing key → 401 with Emby's text;
 * - routes with and without the `/emby` prefix, or only one form (`prefix`), as servers behind different proxies
 *   do; the other form answers 404;
 * - `POST /Library/Media/Updated` (`Updates[]` of `{Path, UpdateType}`) → 204 (or 200, `updateStatus`), recorded;
 *   `GET /Library/SelectableMediaFolders` (`[{Name, Id, Guid, SubFolders: [{Name, Id, Path}]}]`),
 *   `GET /Library/VirtualFolders`, `GET /System/Info` (auth), `GET /System/Info/Public`, `POST /Library/Refresh`;
 * - a library (fake-library.ts) filled by the updates from the test's directories (`toLocal`), and
 *   `GET /Items?ParentId=&Fields=Path` walking it from a library's top-level `Id` (fake-media-server.ts `itemsReply`;
 *   ids are decimal numbers, as Emby's are);
 * - the outage switches of fake-media-server.ts (refused, reset, a status, slow, fail the next N);
 * - `GET /Plugins` and the TargetedScan plugin's Emby build (`POST /Library/ScanPath`, always 200, the outcome in
 *   `Status`) when `targetedScan.installed` (fake-targeted-scan.ts).
 */
export interface FakeEmbyLibrary {
  readonly name: string;
  readonly locations: readonly string[];
  /** How `/Items` shapes its items (default `tvshows`); Emby's folder listing does not show it. */
  readonly collectionType?: string;
}

export interface EmbyUpdate {
  readonly path: string;
  readonly updateType: string | undefined;
  /** The request path it came on (`/Library/Media/Updated` or `/emby/Library/Media/Updated`). */
  readonly route: string;
}

export interface FakeEmbyOptions {
  readonly key?: string;
  /** Which forms of every route exist (default `"both"`). */
  readonly prefix?: "both" | "emby-only" | "none-only";
  /** The answer to a taken update (default 204). */
  readonly updateStatus?: 200 | 204;
  readonly libraries?: readonly FakeEmbyLibrary[];
  /** Server path → the test's directory an update reads (default: the path itself); undefined = nothing there. */
  readonly toLocal?: (serverPath: string) => string | undefined;
  /** The TargetedScan plugin (default: not installed). */
  readonly targetedScan?: FakeTargetedScanOptions;
}

export interface FakeEmby extends FakeHttpServer {
  readonly key: string;
  readonly updates: EmbyUpdate[];
  /** `POST /Items/{id}/Refresh` calls (one item re-read), with the query as sent. */
  readonly itemRefreshes: ItemRefreshCall[];
  /** What the libraries hold: filled by updates, read by `GET /Items`. */
  readonly library: FakeLibrary;
  readonly targetedScan: FakeTargetedScan;
  setLibraries(libraries: readonly FakeEmbyLibrary[]): void;
}

export async function startFakeEmby(options: FakeEmbyOptions = {}): Promise<FakeEmby> {
  const key = options.key ?? "fedcba9876543210fedcba9876543210";
  const prefix = options.prefix ?? "both";
  const updateStatus = options.updateStatus ?? 204;
  let libraries = [...(options.libraries ?? [])];
  const updates: EmbyUpdate[] = [];
  const itemRefreshes: ItemRefreshCall[] = [];
  const toLocal = options.toLocal ?? ((serverPath: string) => serverPath);
  const library = createFakeLibrary(toLocal);
  const locations = (): string[] => libraries.flatMap((l) => [...l.locations]);
  const targetedScan = createFakeTargetedScan({ build: "emby", library, toLocal, locations, ...(options.targetedScan ? { options: options.targetedScan } : {}) });

  function tokenOf(req: RecordedHttpRequest): string | undefined {
    const header = headerOf(req, "x-emby-token");
    if (header) return header;
    const query = req.query.get("api_key") ?? req.query.get("X-Emby-Token");
    if (query) return query;
    const auth = headerOf(req, "x-emby-authorization") ?? headerOf(req, "authorization");
    const match = auth ? /^(?:Emby|MediaBrowser)\s+(.*)$/i.exec(auth) : null;
    return match ? parseAuthParams(match[1] ?? "").get("token") : undefined;
  }

  /** The route without the prefix, or `undefined` when this server does not serve the form it came in. */
  function routeOf(path: string): string | undefined {
    const lower = path.toLowerCase().replace(/\/+$/, "");
    const prefixed = lower === "/emby" || lower.startsWith("/emby/");
    if (prefixed && prefix === "none-only") return undefined;
    if (!prefixed && prefix === "emby-only") return undefined;
    return prefixed ? lower.slice("/emby".length) : lower;
  }

  function route(req: RecordedHttpRequest): HttpReply {
    const path = routeOf(req.path);
    if (path === undefined) return { status: 404, text: "Not found" };
    if (req.method === "GET" && path === "/system/info/public") return { status: 200, json: publicInfo() };
    if (tokenOf(req) !== key) return { status: 401, text: "Access token is invalid or expired." };
    if (req.method === "GET" && path === "/system/info") return { status: 200, json: { ...publicInfo(), OperatingSystem: "Linux" } };
    if (req.method === "GET" && path === "/library/selectablemediafolders") return { status: 200, json: libraries.map(selectable) };
    if (req.method === "GET" && path === "/library/virtualfolders") {
      return { status: 200, json: libraries.map((l, i) => ({ Name: l.name, Locations: [...l.locations], ItemId: String(i + 3) })) };
    }
    if (req.method === "POST" && path === "/library/refresh") return { status: 204 };
    if (req.method === "POST" && path === "/library/media/updated") return mediaUpdated(req);
    if (req.method === "GET" && path === "/plugins") return targetedScan.plugins();
    if (req.method === "POST" && path === "/library/scanpath") return targetedScan.scanPath(req) ?? { status: 404, text: "Not found" };
    if (req.method === "POST" && path === "/library/scanpaths") return targetedScan.scanPaths(req) ?? { status: 404, text: "Not found" };
    const shapes = libraries.map((l, i) => ({ ...l, id: libraryIdOf(i), collectionType: l.collectionType ?? "tvshows" }));
    if (req.method === "GET" && path === "/items") return itemsReply(req, shapes, library.files(), numericId);
    // ItemRefreshService: 200 with an empty body (refresh-fastpath-targets.md §3).
    if (req.method === "POST" && /^\/items\/[^/]+\/refresh$/.test(path)) {
      return itemRefreshReply({ ...req, path }, shapes, library.files(), numericId, itemRefreshes, 200) ?? { status: 404, text: "Not found" };
    }
    return { status: 404, text: "Not found" };
  }

  function mediaUpdated(req: RecordedHttpRequest): HttpReply {
    let body: unknown;
    try {
      body = JSON.parse(req.body);
    } catch {
      return { status: 400, text: "Invalid JSON" };
    }
    const list = field(body, "Updates");
    if (!Array.isArray(list)) return { status: 400, text: "Updates is required" };
    for (const item of list) {
      const path = field(item, "Path");
      if (typeof path !== "string" || path.length === 0) return { status: 400, text: "Value cannot be null. (Parameter 'path')" };
      const updateType = field(item, "UpdateType");
      updates.push({ path, updateType: typeof updateType === "string" ? updateType : undefined, route: req.path });
      library.scanned(path);
    }
    return updateStatus === 200 ? { status: 200, text: "" } : { status: 204 };
  }

  const server = await startFakeHttpServer(route);
  return {
    ...server,
    key,
    updates,
    itemRefreshes,
    library,
    targetedScan,
    setLibraries: (next) => void (libraries = [...next]),
    close: async () => {
      library.close();
      await server.close();
    },
  };
}

function headerOf(req: RecordedHttpRequest, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function field(object: unknown, name: string): unknown {
  if (typeof object !== "object" || object === null) return undefined;
  return Object.entries(object).find(([key]) => key.toLowerCase() === name.toLowerCase())?.[1];
}

function publicInfo() {
  return { LocalAddress: "http://127.0.0.1:8096", ServerName: "fake-emby", Version: "4.9.1.80", Id: "0badc0de0badc0de0badc0de0badc0de" };
}

/** A library's own item id (its collection folder), as `SelectableMediaFolders` gives it. */
function libraryIdOf(index: number): string {
  return String(index * 10 + 3);
}

/** A stable decimal id for an item, as Emby numbers its items (large enough not to meet the libraries' small ones). */
function numericId(key: string): string {
  return String(1000 + Number.parseInt(createHash("md5").update(key).digest("hex").slice(0, 12), 16));
}

function selectable(library: FakeEmbyLibrary, index: number) {
  return {
    Name: library.name,
    Id: libraryIdOf(index),
    Guid: `00000000-0000-0000-0000-${String(index).padStart(12, "0")}`,
    SubFolders: library.locations.map((path, i) => ({ Name: path.split("/").pop() ?? path, Id: String(index * 10 + 4 + i), Path: path })),
  };
}
