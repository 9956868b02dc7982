import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * The HTTP plumbing shared by the fake Jellyfin and Emby servers: one listener on 127.0.0.1, every request recorded
 * (with its body), and the switches a test needs to play an outage:
 * - `setDown("refused")`: the listener is closed, so connections are refused, until `setDown(false)` listens again
 *   on the same port; `"reset"`: connections are accepted and dropped; a number: every request gets that status;
 * - `setDelay(ms)`: every answer waits that long first (real time);
 * - `failNext(match, status, times)`: the next `times` requests whose `METHOD /path` matches get `status`.
 */
export interface RecordedHttpRequest {
  readonly method: string;
  /** The path as it arrived (case kept). */
  readonly path: string;
  /** The query exactly as it arrived on the wire (still encoded). */
  readonly rawQuery: string;
  readonly query: URLSearchParams;
  readonly headers: IncomingMessage["headers"];
  readonly body: string;
}

export interface HttpReply {
  readonly status: number;
  readonly json?: unknown;
  readonly text?: string;
}

export interface FakeHttpServer {
  readonly url: string;
  readonly requests: RecordedHttpRequest[];
  setDown(mode: false | "refused" | "reset" | number): Promise<void>;
  setDelay(ms: number): void;
  failNext(match: RegExp, status: number, times: number): void;
  close(): Promise<void>;
}

export async function startFakeHttpServer(route: (req: RecordedHttpRequest) => HttpReply): Promise<FakeHttpServer> {
  const requests: RecordedHttpRequest[] = [];
  const failures: { match: RegExp; status: number; times: number }[] = [];
  let down: false | "refused" | "reset" | number = false;
  let delayMs = 0;

  const server = createServer((incoming, res) => {
    const chunks: Buffer[] = [];
    incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
    incoming.on("end", () => {
      const url = new URL(incoming.url ?? "/", "http://127.0.0.1");
      const req: RecordedHttpRequest = {
        method: incoming.method ?? "GET",
        path: url.pathname,
        rawQuery: (incoming.url ?? "").split("?")[1] ?? "",
        query: url.searchParams,
        headers: incoming.headers,
        body: Buffer.concat(chunks).toString("utf8"),
      };
      requests.push(req);
      const answer = (): void => {
        if (down === "reset") return void incoming.socket.destroy();
        if (typeof down === "number") return send(res, { status: down, text: `${down}` });
        const failure = failures.find((f) => f.times > 0 && f.match.test(`${req.method} ${req.path}`));
        if (failure) {
          failure.times -= 1;
          return send(res, { status: failure.status, text: `injected ${failure.status}` });
        }
        send(res, route(req));
      };
      if (delayMs > 0) setTimeout(answer, delayMs).unref();
      else answer();
    });
  });
  await listen(server, 0);
  const { port } = server.address() as AddressInfo;

  async function stopListening(): Promise<void> {
    if (!server.listening) return;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    await closed;
  }

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    async setDown(mode) {
      if (mode === "refused") await stopListening();
      else if (!server.listening) await listen(server, port);
      down = mode;
    },
    setDelay: (ms) => void (delayMs = ms),
    failNext: (match, status, times) => void failures.push({ match, status, times }),
    close: stopListening,
  };
}

function listen(server: Server, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
}

function send(res: ServerResponse, reply: HttpReply): void {
  if (reply.json !== undefined) {
    return void res.writeHead(reply.status, { "Content-Type": "application/json; charset=utf-8" }).end(JSON.stringify(reply.json));
  }
  if (reply.text !== undefined) return void res.writeHead(reply.status, { "Content-Type": "text/plain; charset=utf-8" }).end(reply.text);
  res.writeHead(reply.status).end();
}

/** `key="value", key2="value 2"` (the parameters of the MediaBrowser and Emby auth schemes), names lower-cased. */
export function parseAuthParams(text: string): Map<string, string> {
  const params = new Map<string, string>();
  for (const match of text.matchAll(/([A-Za-z]+)\s*=\s*(?:"([^"]*)"|([^,\s]*))/g)) {
    params.set((match[1] ?? "").toLowerCase(), decodeURIComponent(match[2] ?? match[3] ?? ""));
  }
  return params;
}

/**
 * What a fake Jellyfin or Emby server's libraries hold, as `GET /Items?ParentId=` shows it: the items both servers
 * build from the files of a library (fake-library.ts), one per folder level, with the `Type` names they use:
 * - `tvshows`: `Series` (the show's folder) → `Season` (a season folder; episodes lying in the show's folder get a
 *   season with no `Path`, as Jellyfin makes one up) → `Episode` (the file);
 * - `movies`: a `Movie` per video file in the library's folder or one folder below, straight under the library: a
 *   movie's `Path` is its file, and its folder is no item (deeper files are extras, no items);
 * - `music`: `MusicArtist` → `MusicAlbum` → `Audio`;
 * - anything else: a `Folder` per folder, a `Video` per file.
 * Ids are stable (derived from the type and the path, the way the servers derive theirs); `Path` is there only with
 * `Fields=Path`, as Jellyfin serializes it; `StartIndex`/`Limit` page the answer; an unknown parent has no children.
 */
export interface FakeItemLibrary {
  /** The library's own item id, as its listing (`ItemId`, Emby's `Id`) gives it. */
  readonly id: string;
  readonly name: string;
  readonly locations: readonly string[];
  readonly collectionType?: string;
}

interface FakeItem {
  readonly Id: string;
  readonly Name: string;
  readonly Type: string;
  readonly IsFolder: boolean;
  readonly Path?: string;
  readonly LocationType: "FileSystem" | "Virtual";
}

/** The answer to `GET /Items` for these libraries and files; `idOf` spells an id the server's way. */
export function itemsReply(
  req: RecordedHttpRequest,
  libraries: readonly FakeItemLibrary[],
  files: readonly string[],
  idOf: (key: string) => string,
): HttpReply {
  const parentId = queryParam(req, "ParentId");
  const all =
    parentId === undefined || parentId === ""
      ? libraries.map((l): FakeItem => ({
          Id: l.id,
          Name: l.name,
          Type: "CollectionFolder",
          IsFolder: true,
          Path: `/config/root/default/${l.name}`,
          LocationType: "FileSystem",
        }))
      : (itemTree(libraries, files, idOf).get(parentId) ?? []);
  const withPath = (queryParam(req, "Fields") ?? "").split(",").some((f) => f.trim().toLowerCase() === "path");
  const start = Number(queryParam(req, "StartIndex") ?? 0) || 0;
  const limit = queryParam(req, "Limit");
  const page = all.slice(start, limit === undefined ? undefined : start + (Number(limit) || 0));
  const Items = page.map(({ Path, ...rest }) => (withPath && Path !== undefined ? { ...rest, Path } : rest));
  return { status: 200, json: { Items, TotalRecordCount: all.length, StartIndex: start } };
}

/** Every parent id → its children, built afresh from the files (the library changes under scans). */
function itemTree(libraries: readonly FakeItemLibrary[], files: readonly string[], idOf: (key: string) => string): Map<string, FakeItem[]> {
  const tree = new Map<string, FakeItem[]>();
  const add = (parentId: string, type: string, path: string, isFolder: boolean, virtual = false): string => {
    const Id = idOf(`${type}:${virtual ? "virtual:" : ""}${path}`);
    const siblings = tree.get(parentId) ?? [];
    if (!siblings.some((s) => s.Id === Id)) {
      const Name = virtual ? "Season 1" : (path.split("/").pop() ?? path);
      siblings.push({ Id, Name, Type: type, IsFolder: isFolder, ...(virtual ? {} : { Path: path }), LocationType: virtual ? "Virtual" : "FileSystem" });
    }
    tree.set(parentId, siblings);
    return Id;
  };
  for (const library of libraries) {
    for (const location of library.locations) {
      const base = location.endsWith("/") ? location.slice(0, -1) : location;
      for (const file of files) {
        if (!file.startsWith(`${base}/`)) continue;
        const parts = file.slice(base.length + 1).split("/");
        const folder = (n: number): string => [base, ...parts.slice(0, n)].join("/");
        switch (library.collectionType) {
          case "tvshows": {
            if (parts.length < 2) break;
            const series = add(library.id, "Series", folder(1), true);
            const season = parts.length === 2 ? add(series, "Season", folder(1), true, true) : add(series, "Season", folder(2), true);
            add(season, "Episode", file, false);
            break;
          }
          case "movies":
            if (parts.length <= 2) add(library.id, "Movie", file, false);
            break;
          case "music": {
            if (parts.length === 1) add(library.id, "Audio", file, false);
            else if (parts.length === 2) add(add(library.id, "MusicAlbum", folder(1), true), "Audio", file, false);
            else add(add(add(library.id, "MusicArtist", folder(1), true), "MusicAlbum", folder(2), true), "Audio", file, false);
            break;
          }
          default: {
            let parent = library.id;
            for (let n = 1; n < parts.length; n += 1) parent = add(parent, "Folder", folder(n), true);
            add(parent, "Video", file, false);
          }
        }
      }
    }
  }
  return tree;
}

/** One `POST /Items/{id}/Refresh` as the fakes record it: the item's file (or folder) and the query as sent. */
export interface ItemRefreshCall {
  readonly itemId: string;
  readonly path: string | undefined;
  readonly query: Readonly<Record<string, string>>;
}

/**
 * `POST /Items/{id}/Refresh` (refresh-fastpath-targets.md §2, §3): an unknown id → 404, else recorded and answered
 * `status` (Jellyfin 204 after queueing; Emby 200). The modes are recorded as sent: an absent one is Jellyfin's `None`.
 */
export function itemRefreshReply(
  req: RecordedHttpRequest,
  libraries: readonly FakeItemLibrary[],
  files: readonly string[],
  idOf: (key: string) => string,
  calls: ItemRefreshCall[],
  status: number,
): HttpReply | undefined {
  const match = /^\/items\/([^/]+)\/refresh$/i.exec(req.path.replace(/^\/emby/i, "").replace(/\/+$/, ""));
  if (!match || req.method !== "POST") return undefined;
  const itemId = decodeURIComponent(match[1] ?? "");
  const item = [...itemTree(libraries, files, idOf).values()].flat().find((candidate) => candidate.Id === itemId);
  if (!item) return { status: 404 };
  calls.push({ itemId, path: item.Path, query: Object.fromEntries(req.query) });
  return { status };
}

/** A query parameter by name, the name's case ignored (ASP.NET binds them so). */
function queryParam(req: RecordedHttpRequest, name: string): string | undefined {
  for (const [key, value] of req.query) if (key.toLowerCase() === name.toLowerCase()) return value;
  return undefined;
}
