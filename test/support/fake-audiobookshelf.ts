import { createHash } from "node:crypto";
import { startFakeHttpServer, type FakeHttpServer, type HttpReply, type RecordedHttpRequest } from "./fake-media-server.ts";

/**
 * A fake Audiobookshelf server on 127.0.0.1, built from ../shared/reference/refresh-fastpath-targets.md §5 (ABS source
 * at 2.36.0):
 * - auth: API keys as `Authorization: Bearer <key>` (or `?token=`); an unknown key → 401. Each key acts as a user of a
 *   type (`root`, `admin`, `user`, `guest`); the scan routes and the watcher route answer 403 to a user who is not an
 *   admin or root;
 * - `GET /status` (no auth): `{ app: "audiobookshelf", serverVersion, isInit }`;
 * - `GET /api/libraries`: **wrapped**, `{ libraries: [ {id, name, folders: [{id, fullPath, libraryId, addedAt}],
 *   mediaType, settings: {disableWatcher, …}, lastScan, …} ] }`;
 * - `POST /api/authorize`: `{ user: {id, username, type}, userDefaultLibraryId, serverSettings: {scannerDisableWatcher, version} }`;
 * - `POST /api/libraries/{id}/scan`: 200 **before** scanning; a request while that library scans is **dropped without
 *   a word** (recorded in `dropped`). With `scans: "held"` a scan runs until `finishScans()` and adds only the files
 *   that were on "disk" when it started (a running scan does not see files that come later); otherwise it ends at once;
 * - `GET /api/tasks`: `{ tasks: [ {action: "library-scan", data: {libraryId, libraryName}, isFinished: false, …} ] }` while
 *   a scan runs;
 * - `POST /api/watcher/update` `{libraryId, path, type}`: 200 always; it adds the file only when the library has a
 *   watcher (neither `settings.disableWatcher` nor the server's `scannerDisableWatcher`), else it is recorded in
 *   `ignored` ("Invalid library id from watcher" in ABS's log);
 * - `GET /api/libraries/{id}/items?minified=1&sort=addedAt&desc=1&limit&page`: `{ results: [{id, path, relPath, isFile,
 *   …}], total, limit, page }`, newest first; `GET /api/items/{id}`: `{ id, path, libraryFiles: [{ metadata: {path} }] }`;
 *   `POST /api/items/{id}/scan`: `{ result: "UPDATED" }` for a folder item, 500 for a single-file item (admin only).
 * Items: a file directly in a library folder is a single-file item; a file deeper is part of the book whose folder is
 * the file's folder. Files are put on "disk" by the test (`addFile`, `removeFile`); a library scan marks an item whose
 * files are all gone `isMissing` and keeps it.
 */
export interface FakeAbsLibrary {
  readonly id: string;
  readonly name: string;
  readonly folders: readonly string[];
  readonly mediaType?: "book" | "podcast";
  readonly disableWatcher?: boolean;
}

export interface FakeAbsUser {
  readonly username: string;
  readonly type: "root" | "admin" | "user" | "guest";
}

export interface FakeAudiobookshelfOptions {
  readonly version?: string;
  readonly libraries?: readonly FakeAbsLibrary[];
  /** Keys → their users (default: one root key, `key`). */
  readonly keys?: Readonly<Record<string, FakeAbsUser>>;
  readonly scannerDisableWatcher?: boolean;
  /** `"instant"` (default): a library scan ends at once; `"held"`: it runs until `finishScans()`. */
  readonly scans?: "instant" | "held";
  /** No `/api/tasks` route (404), as a server that cannot say what it does. */
  readonly noTasksRoute?: boolean;
}

export interface FakeAudiobookshelf extends FakeHttpServer {
  /** A root user's key. */
  readonly key: string;
  /** Library scans started (library ids). */
  readonly scansStarted: string[];
  /** Library scans dropped because one was running (library ids). */
  readonly dropped: string[];
  /** Watcher updates taken: `{libraryId, path, type}`. */
  readonly watcherUpdates: { libraryId: string; path: string; type: string }[];
  /** Watcher updates that reached no watcher (the endpoint said 200 all the same). */
  readonly ignored: { libraryId: string; path: string; type: string }[];
  /** `POST /api/items/{id}/scan` taken (item paths). */
  readonly itemScans: string[];
  addFile(path: string): void;
  removeFile(path: string): void;
  /** Starts a library scan as the server's own schedule would (not through the API). */
  startScan(libraryId: string): void;
  /** Ends every running scan (held mode): each adds what it saw when it started. */
  finishScans(): void;
  /** The paths of the items of a library. */
  itemPaths(libraryId: string): string[];
  setLibraryWatcher(libraryId: string, disabled: boolean): void;
}

interface Item {
  readonly id: string;
  readonly libraryId: string;
  readonly path: string;
  readonly isFile: boolean;
  readonly files: Set<string>;
  readonly addedAt: number;
  isMissing: boolean;
}

export async function startFakeAudiobookshelf(options: FakeAudiobookshelfOptions = {}): Promise<FakeAudiobookshelf> {
  const key = "eyJhbGciOiJIUzI1NiJ9.eyJ0eXBlIjoiYXBpIn0.root-key";
  const keys: Record<string, FakeAbsUser> = { ...(options.keys ?? {}), [key]: { username: "root", type: "root" } };
  const libraries = (options.libraries ?? []).map((library) => ({ ...library, disableWatcher: library.disableWatcher ?? false }));
  const disk = new Set<string>();
  const items = new Map<string, Item>();
  const running = new Map<string, readonly string[]>(); // library id → the files it saw when it started
  let clock = 1_700_000_000_000;
  const scansStarted: string[] = [];
  const dropped: string[] = [];
  const watcherUpdates: FakeAudiobookshelf["watcherUpdates"] = [];
  const ignored: FakeAudiobookshelf["ignored"] = [];
  const itemScans: string[] = [];

  const libraryOf = (id: string) => libraries.find((library) => library.id === id);
  const folderOf = (libraryId: string, path: string): string | undefined =>
    libraryOf(libraryId)?.folders.find((folder) => path.startsWith(`${folder.replace(/\/+$/, "")}/`));

  function addToLibrary(libraryId: string, file: string): void {
    const folder = folderOf(libraryId, file);
    if (folder === undefined) return;
    const parent = file.slice(0, file.lastIndexOf("/"));
    const isFile = parent === folder.replace(/\/+$/, "");
    const itemPath = isFile ? file : parent;
    const existing = items.get(itemPath);
    if (existing) {
      existing.isMissing = false;
      return void existing.files.add(file);
    }
    const id = createHash("sha1").update(`${libraryId}:${itemPath}`).digest("hex").slice(0, 32);
    clock += 1000;
    items.set(itemPath, { id, libraryId, path: itemPath, isFile, files: new Set([file]), addedAt: clock, isMissing: false });
  }

  /** A scan adds what it saw; an item none of whose files it saw is kept, marked missing (as ABS does). */
  function scan(libraryId: string, seen: readonly string[]): void {
    for (const file of seen) addToLibrary(libraryId, file);
    for (const item of items.values()) if (item.libraryId === libraryId && ![...item.files].some((f) => seen.includes(f))) item.isMissing = true;
  }

  function startScan(libraryId: string): void {
    const seen = [...disk].filter((file) => folderOf(libraryId, file) !== undefined);
    scansStarted.push(libraryId);
    if (options.scans === "held") running.set(libraryId, seen);
    else scan(libraryId, seen);
  }

  function userOf(req: RecordedHttpRequest): FakeAbsUser | undefined {
    const header = req.headers.authorization ?? "";
    const bearer = /^Bearer\s+(.+)$/i.exec(header)?.[1] ?? req.query.get("token") ?? "";
    return keys[bearer.trim()];
  }

  const libraryJson = (library: (typeof libraries)[number]) => ({
    id: library.id,
    name: library.name,
    folders: library.folders.map((fullPath, i) => ({ id: `${library.id}-f${i}`, fullPath, libraryId: library.id, addedAt: 1_700_000_000_000 })),
    displayOrder: 1,
    icon: "audiobookshelf",
    mediaType: library.mediaType ?? "book",
    provider: "google",
    settings: { coverAspectRatio: 1, disableWatcher: library.disableWatcher, skipMatchingMediaWithAsin: false },
    lastScan: null,
    lastScanVersion: null,
    createdAt: 1_700_000_000_000,
    lastUpdate: 1_700_000_000_000,
  });

  function route(req: RecordedHttpRequest): HttpReply {
    const { method, path } = req;
    if (method === "GET" && path === "/status") {
      return { status: 200, json: { app: "audiobookshelf", serverVersion: options.version ?? "2.36.0", isInit: true, language: "en-us", authMethods: ["local"] } };
    }
    if (!path.startsWith("/api/")) return { status: 404, text: "Not Found" };
    const user = userOf(req);
    if (!user) return { status: 401, text: "Unauthorized" };
    const admin = user.type === "root" || user.type === "admin";
    if (method === "GET" && path === "/api/libraries") return { status: 200, json: { libraries: libraries.map(libraryJson) } };
    if (method === "POST" && path === "/api/authorize") {
      return {
        status: 200,
        json: {
          user: { id: `usr_${user.username}`, username: user.username, type: user.type, isActive: true },
          userDefaultLibraryId: libraries[0]?.id ?? null,
          serverSettings: { id: "server-settings", scannerDisableWatcher: options.scannerDisableWatcher ?? false, version: options.version ?? "2.36.0" },
          ereaderDevices: [],
          Source: "docker",
        },
      };
    }
    if (method === "GET" && path === "/api/tasks") {
      if (options.noTasksRoute) return { status: 404, text: "Not Found" };
      const tasks = [...running.keys()].map((libraryId) => ({
        id: `task-${libraryId}`,
        action: "library-scan",
        data: { libraryId, libraryName: libraryOf(libraryId)?.name, libraryMediaType: "book" },
        title: `Scanning "${libraryOf(libraryId)?.name}" library`,
        isFailed: false,
        isFinished: false,
        startedAt: clock,
        finishedAt: null,
      }));
      return { status: 200, json: { tasks } };
    }
    const scanMatch = /^\/api\/libraries\/([^/]+)\/scan$/.exec(path);
    if (method === "POST" && scanMatch) {
      if (!admin) return { status: 403, text: "Forbidden" };
      const id = decodeURIComponent(scanMatch[1] ?? "");
      if (!libraryOf(id)) return { status: 404, text: "Not Found" };
      if (running.has(id)) dropped.push(id);
      else startScan(id);
      return { status: 200, text: "OK" };
    }
    if (method === "POST" && path === "/api/watcher/update") {
      if (!admin) return { status: 403, text: "Forbidden" };
      const body = JSON.parse(req.body || "{}") as { libraryId?: string; path?: string; type?: string };
      if (!body.libraryId || !body.path || !body.type) return { status: 400, text: "Invalid request body" };
      const update = { libraryId: body.libraryId, path: body.path, type: body.type };
      const library = libraryOf(body.libraryId);
      if (!library || library.disableWatcher || options.scannerDisableWatcher) return ignored.push(update), { status: 200, text: "OK" };
      watcherUpdates.push(update);
      if (update.type === "add" && disk.has(update.path)) addToLibrary(library.id, update.path);
      return { status: 200, text: "OK" };
    }
    const itemsMatch = /^\/api\/libraries\/([^/]+)\/items$/.exec(path);
    if (method === "GET" && itemsMatch) {
      const id = decodeURIComponent(itemsMatch[1] ?? "");
      if (!libraryOf(id)) return { status: 404, text: "Not Found" };
      const limit = Number(req.query.get("limit") ?? 0) || 0;
      const page = Number(req.query.get("page") ?? 0) || 0;
      const all = [...items.values()].filter((item) => item.libraryId === id);
      if (req.query.get("sort") === "addedAt") all.sort((a, b) => (req.query.get("desc") === "1" ? b.addedAt - a.addedAt : a.addedAt - b.addedAt));
      const slice = limit > 0 ? all.slice(page * limit, page * limit + limit) : all;
      const results = slice.map((item) => ({ id: item.id, libraryId: id, path: item.path, relPath: item.path.split("/").pop(), isFile: item.isFile, isMissing: item.isMissing, mediaType: "book", addedAt: item.addedAt, numFiles: item.files.size }));
      return { status: 200, json: { results, total: all.length, limit, page, mediaType: "book", minified: true } };
    }
    const itemScan = /^\/api\/items\/([^/]+)\/scan$/.exec(path);
    if (method === "POST" && itemScan) {
      if (!admin) return { status: 403, text: "Forbidden" };
      const item = [...items.values()].find((i) => i.id === itemScan[1]);
      if (!item) return { status: 404, text: "Not Found" };
      // Folder items only: a single-file item throws in ABS's scanner (500).
      if (item.isFile) return { status: 500, text: "Internal Server Error" };
      itemScans.push(item.path);
      return { status: 200, json: { result: "UPDATED" } };
    }
    const itemMatch = /^\/api\/items\/([^/]+)$/.exec(path);
    if (method === "GET" && itemMatch) {
      const item = [...items.values()].find((i) => i.id === itemMatch[1]);
      if (!item) return { status: 404, text: "Not Found" };
      const libraryFiles = [...item.files].map((file, i) => ({ ino: String(i), metadata: { filename: file.split("/").pop(), path: file, relPath: file.split("/").pop() }, fileType: "audio" }));
      return { status: 200, json: { id: item.id, libraryId: item.libraryId, path: item.path, isFile: item.isFile, libraryFiles } };
    }
    return { status: 404, text: "Not Found" };
  }

  const server = await startFakeHttpServer(route);
  return Object.assign(server, {
    key,
    scansStarted,
    dropped,
    watcherUpdates,
    ignored,
    itemScans,
    addFile: (path: string) => void disk.add(path),
    removeFile: (path: string) => void disk.delete(path),
    startScan,
    finishScans() {
      for (const [libraryId, seen] of running) scan(libraryId, seen);
      running.clear();
    },
    itemPaths: (libraryId: string) => [...items.values()].filter((item) => item.libraryId === libraryId).map((item) => item.path),
    setLibraryWatcher(libraryId: string, disabled: boolean) {
      const library = libraries.find((l) => l.id === libraryId);
      if (library) library.disableWatcher = disabled;
    },
  });
}
