import { createHash } from "node:crypto";
import { createFakeLibrary, type FakeLibrary } from "./fake-library.ts";
import { createFakeLibraryMonitor, type FakeLibraryMonitor } from "./fake-library-monitor.ts";
import { createFakeTargetedScan, type FakeTargetedScan, type FakeTargetedScanOptions } from "./fake-targeted-scan.ts";
import { itemRefreshReply, itemsReply, parseAuthParams, startFakeHttpServer, type FakeHttpServer, type HttpReply, type ItemRefreshCall, type RecordedHttpRequest } from "./fake-media-server.ts";

/**
 * A fake Jellyfin server on 127.0.0.1, faithful to the points of ../shared/reference/integrations.md §4.1:
 * - auth as `AuthorizationContext` parses it: `Authorization: MediaBrowser Token="…"` (other parameters allowed) and
 *   the `ApiKey` query are always accepted; the legacy forms (`X-Emby-Token`, `X-MediaBrowser-Token` headers,
 *   `api_key` query, `X-Emby-Authorization` header, the `Emby` scheme) only while legacy authorization is on:
 *   on by default in 10.11, **off in 12** (a 12 server refuses `X-Emby-Token` with 401). A bad or missing key → 401;
 * - `POST /Library/Media/Updated`: JSON read case-insensitively; 204 with no body; a missing `Updates` or a null
 *   `Path` → 400; `UpdateType` is recorded but changes nothing (Jellyfin ignores it);
 * - `GET /Library/VirtualFolders` (`[{Name, Locations, CollectionType, ItemId, …}]`), `GET /System/Info` (auth),
 *   `GET /System/Info/Public` (no auth), `POST /Library/Refresh` (204); routes match case-insensitively;
 * - a library (fake-library.ts) filled by the updates from the test's directories (`toLocal`), and
 *   `GET /Items?ParentId=&Fields=Path` walking it from a library's `ItemId` (fake-media-server.ts `itemsReply`; ids are
 *   32 hex digits, as Jellyfin's GUIDs are written);
 * - the outage switches of fake-media-server.ts (refused, reset, a status, slow, fail the next N);
 * - `GET /Plugins` and the TargetedScan plugin's `POST /Library/ScanPath` when `targetedScan.installed`
 *   (fake-targeted-scan.ts), and, with `libraryMonitorDelayMs`, Jellyfin's library monitor behind Media/Updated
 *   (fake-library-monitor.ts: the delay restarted by every event, then the nearest known folder read again);
 * - `POST /Items/{id}/Refresh`: 404 for an unknown id, else recorded with its query and 204 (refresh-fastpath-targets.md §2).
 */
export interface FakeJellyfinLibrary {
  readonly name: string;
  readonly locations: readonly string[];
  readonly collectionType?: string;
}

export interface JellyfinUpdate {
  readonly path: string;
  readonly updateType: string | undefined;
  /** Which auth form carried the key. */
  readonly auth: JellyfinAuthForm;
}

export type JellyfinAuthForm = "MediaBrowser" | "ApiKey" | "legacy";

export interface FakeJellyfinOptions {
  readonly key?: string;
  /** `"10.11"` (default): legacy auth on; `"12"`: legacy auth off. */
  readonly version?: "10.11" | "12";
  /** Overrides the version's default for `EnableLegacyAuthorization`. */
  readonly legacyAuthorization?: boolean;
  readonly libraries?: readonly FakeJellyfinLibrary[];
  /** Server path → the test's directory an update reads (default: the path itself); undefined = nothing there. */
  readonly toLocal?: (serverPath: string) => string | undefined;
  /** The TargetedScan plugin (default: not installed). */
  readonly targetedScan?: FakeTargetedScanOptions;
  /**
   * Model LibraryMonitorDelay (Jellyfin's default is 60 s, `JELLYFIN_LIBRARY_MONITOR_DELAY_MS`): an update is acted on
   * this long after the last one. Unset: an update is read at once (the import delay of fake-library.ts aside).
   */
  readonly libraryMonitorDelayMs?: number;
}

export interface FakeJellyfin extends FakeHttpServer {
  readonly key: string;
  readonly version: string;
  readonly updates: JellyfinUpdate[];
  /** `POST /Library/Refresh` calls (a full scan of every library). */
  readonly fullRefreshes: number;
  /** `POST /Items/{id}/Refresh` calls (one item re-read), with the query as sent. */
  readonly itemRefreshes: ItemRefreshCall[];
  /** What the libraries hold: filled by updates, read by `GET /Items`. */
  readonly library: FakeLibrary;
  /** The TargetedScan plugin: its calls, and `set` to install or remove it. */
  readonly targetedScan: FakeTargetedScan;
  /** The library monitor, when `libraryMonitorDelayMs` is set. */
  readonly monitor?: FakeLibraryMonitor;
  setLibraries(libraries: readonly FakeJellyfinLibrary[]): void;
}

export async function startFakeJellyfin(options: FakeJellyfinOptions = {}): Promise<FakeJellyfin> {
  const key = options.key ?? "0123456789abcdef0123456789abcdef";
  const version = options.version === "12" ? "12.0.0" : "10.11.2";
  const legacy = options.legacyAuthorization ?? options.version !== "12";
  let libraries = [...(options.libraries ?? [])];
  const updates: JellyfinUpdate[] = [];
  const itemRefreshes: ItemRefreshCall[] = [];
  let fullRefreshes = 0;
  const toLocal = options.toLocal ?? ((serverPath: string) => serverPath);
  const library = createFakeLibrary(toLocal);
  const locations = (): string[] => libraries.flatMap((l) => [...l.locations]);
  const targetedScan = createFakeTargetedScan({ build: "jellyfin", library, toLocal, locations, ...(options.targetedScan ? { options: options.targetedScan } : {}) });
  const monitor =
    options.libraryMonitorDelayMs === undefined ? undefined : createFakeLibraryMonitor({ library, delayMs: options.libraryMonitorDelayMs, locations });

  /** The key and the form that carried it, as `AuthorizationContext` finds it; `undefined` when none counts. */
  function tokenOf(req: RecordedHttpRequest): { token: string; form: JellyfinAuthForm } | undefined {
    const header = headerOf(req, "authorization") ?? (legacy ? headerOf(req, "x-emby-authorization") : undefined);
    if (header) {
      const space = header.indexOf(" ");
      const scheme = space < 0 ? header : header.slice(0, space);
      const schemeOk = scheme.toLowerCase() === "mediabrowser" || (legacy && scheme.toLowerCase() === "emby");
      const token = schemeOk ? parseAuthParams(header.slice(space + 1)).get("token") : undefined;
      if (token) return { token, form: scheme.toLowerCase() === "mediabrowser" && headerOf(req, "authorization") ? "MediaBrowser" : "legacy" };
    }
    const apiKey = req.query.get("ApiKey") ?? req.query.get("apikey");
    if (apiKey) return { token: apiKey, form: "ApiKey" };
    if (!legacy) return undefined;
    const legacyToken = headerOf(req, "x-emby-token") ?? headerOf(req, "x-mediabrowser-token") ?? req.query.get("api_key");
    return legacyToken ? { token: legacyToken, form: "legacy" } : undefined;
  }

  function route(req: RecordedHttpRequest): HttpReply {
    const path = req.path.toLowerCase().replace(/\/+$/, "");
    if (req.method === "GET" && path === "/system/info/public") return { status: 200, json: publicInfo(version) };
    const auth = tokenOf(req);
    if (auth?.token !== key) return { status: 401 };
    if (req.method === "GET" && path === "/system/info") return { status: 200, json: { ...publicInfo(version), OperatingSystem: "Linux" } };
    if (req.method === "GET" && path === "/library/virtualfolders") return { status: 200, json: libraries.map(virtualFolder) };
    if (req.method === "POST" && path === "/library/refresh") {
      fullRefreshes += 1;
      return { status: 204 };
    }
    if (req.method === "POST" && path === "/library/media/updated") return mediaUpdated(req, auth.form);
    // PluginsController: the administrator policy; an API key counts as an administrator.
    if (req.method === "GET" && path === "/plugins") return targetedScan.plugins();
    if (req.method === "POST" && path === "/library/scanpath") return targetedScan.scanPath(req) ?? { status: 404 };
    if (req.method === "POST" && path === "/library/scanpaths") return targetedScan.scanPaths(req) ?? { status: 404 };
    const shapes = libraries.map((l, i) => ({ ...l, id: itemIdOf(i), collectionType: l.collectionType ?? "tvshows" }));
    const idOf = (key: string): string => createHash("md5").update(key).digest("hex");
    if (req.method === "GET" && path === "/items") return itemsReply(req, shapes, library.files(), idOf);
    // ItemRefreshController: 204 once queued (the API key counts as the administrator it needs).
    const refreshed = itemRefreshReply(req, shapes, library.files(), idOf, itemRefreshes, 204);
    if (refreshed) return refreshed;
    return { status: 404 };
  }

  function mediaUpdated(req: RecordedHttpRequest, form: JellyfinAuthForm): HttpReply {
    let body: unknown;
    try {
      body = JSON.parse(req.body);
    } catch {
      return problem("The JSON value could not be converted to MediaUpdateInfoDto.");
    }
    const list = field(body, "Updates");
    if (!Array.isArray(list)) return problem("The Updates field is required.");
    const items = list.map((item) => ({ path: field(item, "Path"), updateType: field(item, "UpdateType") }));
    // ReportFileSystemChanged(null) throws ArgumentException; ExceptionMiddleware answers 400.
    if (items.some((item) => typeof item.path !== "string" || item.path.length === 0)) {
      return { status: 400, text: "Value cannot be null. (Parameter 'path')" };
    }
    for (const item of items) {
      updates.push({ path: item.path as string, updateType: typeof item.updateType === "string" ? item.updateType : undefined, auth: form });
      if (monitor) monitor.report(item.path as string);
      else library.scanned(item.path as string);
    }
    return { status: 204 };
  }

  const server = await startFakeHttpServer(route);
  return {
    ...server,
    key,
    version,
    updates,
    get fullRefreshes() {
      return fullRefreshes;
    },
    itemRefreshes,
    library,
    targetedScan,
    ...(monitor ? { monitor } : {}),
    setLibraries: (next) => void (libraries = [...next]),
    close: async () => {
      monitor?.close();
      library.close();
      await server.close();
    },
  };
}

function headerOf(req: RecordedHttpRequest, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** A JSON property read the way ASP.NET's web defaults read it: the name's case does not matter. */
function field(object: unknown, name: string): unknown {
  if (typeof object !== "object" || object === null) return undefined;
  const entry = Object.entries(object).find(([key]) => key.toLowerCase() === name.toLowerCase());
  return entry?.[1];
}

function problem(title: string): HttpReply {
  return { status: 400, json: { type: "https://tools.ietf.org/html/rfc9110#section-15.5.1", title, status: 400 } };
}

function publicInfo(version: string) {
  return { LocalAddress: "http://127.0.0.1:8096", ServerName: "fake-jellyfin", Version: version, ProductName: "Jellyfin Server", Id: "f00dfacef00dfacef00dfacef00dface", StartupWizardCompleted: true };
}

/** A library's own item id: 32 hex digits, as Jellyfin writes a GUID. */
function itemIdOf(index: number): string {
  return index.toString(16).padStart(32, "0");
}

function virtualFolder(library: FakeJellyfinLibrary, index: number) {
  return {
    Name: library.name,
    Locations: [...library.locations],
    CollectionType: library.collectionType ?? "tvshows",
    LibraryOptions: { Enabled: true, EnableRealtimeMonitor: false },
    ItemId: itemIdOf(index),
    PrimaryImageItemId: index.toString(16).padStart(32, "0"),
    RefreshProgress: null,
    RefreshStatus: "Idle",
  };
}
