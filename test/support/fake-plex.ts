import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { createFakeLibrary, type FakeLibrary } from "./fake-library.ts";

/**
 * A fake Plex Media Server on 127.0.0.1 that behaves like the real one where predecessors got hurt
 * (../shared/reference/integrations.md §3.1):
 * - `Directory[].key` is a string, `Location` an array; `refreshing` per section;
 * - a bad or missing token gets 401 with an HTML body even when JSON was asked for;
 * - PUT/POST on `/library/sections/{id}/refresh` get 404 (PMS ≥ 1.32.7), only GET scans;
 * - a path outside every location gets 200 and nothing is scanned (Plex only logs it);
 * - `/activities` with `Context.librarySectionID` sometimes a string, sometimes a number, sometimes absent;
 * - XML unless `Accept: application/json`;
 * - a library (fake-library.ts) filled by scans from the test's directories; `/library/sections/{id}/all?type=&file=`
 *   answers the items in the file's folder (its neighbourhood, as Plex does on shows), not just the file, and a show
 *   section answers 500 without `type`;
 * - `PUT /library/metadata/{ratingKey}/refresh` and `…/analyze` (refresh-fastpath-targets.md §4: one item, a bare PUT,
 *   `ids` may be a comma-separated list): recorded with whether a section was still scanning when it came; an unknown
 *   ratingKey gets 404;
 * - switches: down (connection reset, or a status), slow (delay), fail the next N matching requests.
 */

export interface FakeSection {
  readonly key: string;
  readonly title: string;
  readonly type: "movie" | "show" | "artist" | "photo";
  readonly locations: readonly string[];
}

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  /** The query exactly as it arrived on the wire (still encoded). */
  readonly rawQuery: string;
  readonly query: URLSearchParams;
  readonly headers: IncomingMessage["headers"];
}

export interface RecordedScan {
  readonly sectionId: string;
  readonly path: string;
  readonly rawQuery: string;
  /** False when Plex would have skipped it ("was not inside any known section location"). */
  readonly inside: boolean;
}

export interface FakePlexOptions {
  readonly token?: string;
  readonly sections?: readonly FakeSection[];
  readonly version?: string;
  /** Server path → the test's directory that a scan reads (default: the path itself); undefined = nothing there. */
  readonly toLocal?: (serverPath: string) => string | undefined;
  /** The address to listen on (default 127.0.0.1; "0.0.0.0" for a caller in a container, which uses the host's address). */
  readonly listenHost?: string;
}

export interface FakePlex {
  readonly url: string;
  readonly token: string;
  readonly requests: RecordedRequest[];
  readonly scans: RecordedScan[];
  /** Section ids whose trash was emptied, in order. */
  readonly emptied: string[];
  /** Rating keys analyzed through the API, in order. */
  readonly analyzed: string[];
  /** Item metadata refreshes (`PUT /library/metadata/{ratingKey}/refresh`), in order, each with the file of its item and
   *  whether a section was still scanning (busy) when it came. */
  readonly refreshed: { readonly ratingKey: string; readonly file: string | undefined; readonly duringScan: boolean }[];
  /** What the library holds: filled by scans inside a location, read by `/library/sections/{id}/all`. */
  readonly library: FakeLibrary;
  setSections(sections: readonly FakeSection[]): void;
  /** `false` = up; `"reset"` = connections are dropped; a number = every request gets that status. */
  setDown(mode: false | "reset" | number): void;
  /** Every answer waits this long first (real time). */
  setDelay(ms: number): void;
  /** The next `times` requests whose `METHOD /path` matches get `status`. */
  failNext(match: RegExp, status: number, times: number): void;
  /** The section reports busy (refreshing + an activity) for the next `reads` status reads. */
  setBusy(sectionId: string, reads: number): void;
  /** How many status reads a scan stays busy after it was requested (default 0: done at once). */
  setScanBusyReads(reads: number): void;
  /** Activities are listed without `Context` (as in the first second of a scan). */
  setActivityContext(present: boolean): void;
  /** Each listed item carries about this many bytes of cast (`Role[]`, default none), as real items carry metadata. */
  setItemMetadataBytes(bytes: number): void;
  /** `false` plays a server that ignores `X-Plex-Container-Start`/`-Size` and answers every item at once. */
  setPaging(honoured: boolean): void;
  close(): Promise<void>;
}

const HTML_401 =
  '<html><head><script>window.location.href="/web/index.html"</script><title>Unauthorized</title></head>' +
  "<body><h1>401 Unauthorized</h1></body></html>";
const HTML_404 = "<html><head><title>Not Found</title></head><body><h1>404 Not Found</h1></body></html>";
const HTML_500 = "<html><head><title>Internal Server Error</title></head><body><h1>500 Internal Server Error</h1></body></html>";

/** Plex's item type (number and name) for what each kind of section holds. */
const ITEM_TYPES: Readonly<Record<FakeSection["type"], { number: number; name: string }>> = {
  movie: { number: 1, name: "movie" },
  show: { number: 4, name: "episode" },
  artist: { number: 10, name: "track" },
  photo: { number: 13, name: "photo" },
};

export async function startFakePlex(options: FakePlexOptions = {}): Promise<FakePlex> {
  const token = options.token ?? "fake-plex-token-0123456789";
  const version = options.version ?? "1.41.3.9314-a0bfb8370";
  let sections = [...(options.sections ?? [])];
  let down: false | "reset" | number = false;
  let delayMs = 0;
  let scanBusyReads = 0;
  let activityContext = true;
  let metadataBytes = 0;
  let paging = true;
  const busy = new Map<string, number>();
  const failures: { match: RegExp; status: number; times: number }[] = [];
  const requests: RecordedRequest[] = [];
  const scans: RecordedScan[] = [];
  const emptied: string[] = [];
  const analyzed: string[] = [];
  const refreshed: FakePlex["refreshed"] = [];
  const library = createFakeLibrary(options.toLocal ?? ((serverPath) => serverPath));
  /** Stable ids per file, as Plex keeps a ratingKey for an item. */
  const itemIds = new Map<string, number>();

  function readStatus(): Map<string, boolean> {
    const snapshot = new Map<string, boolean>();
    for (const [id, left] of busy) {
      snapshot.set(id, left > 0);
      if (left <= 1) busy.delete(id);
      else busy.set(id, left - 1);
    }
    return snapshot;
  }

  /** Token and injected failures first, as Plex checks the token before it routes. */
  function route(req: RecordedRequest): Reply {
    if (req.method === "GET" && req.path === "/identity") {
      return ok({ MediaContainer: { size: 0, claimed: true, machineIdentifier: "fake-machine", version } });
    }
    const given = req.headers["x-plex-token"] ?? req.query.get("X-Plex-Token");
    if (given !== token) return { status: 401, html: HTML_401 };
    const failure = failures.find((f) => f.times > 0 && f.match.test(`${req.method} ${req.path}`));
    if (failure) {
      failure.times -= 1;
      return { status: failure.status, html: `<html><body>${failure.status}</body></html>` };
    }
    return readRoute(req) ?? writeRoute(req) ?? { status: 404, html: HTML_404 };
  }

  function readRoute(req: RecordedRequest): Reply | undefined {
    const { method, path } = req;
    if (method !== "GET") return undefined;
    if (path === "/") {
      return ok({ MediaContainer: { size: 0, friendlyName: "fake-plex", machineIdentifier: "fake-machine", version } });
    }
    if (path === "/library/sections" || path === "/library/sections/all") {
      const status = readStatus();
      const Directory = sections.map((s, index) => directory(s, index, status.get(s.key) ?? false));
      return ok({ MediaContainer: { size: sections.length, title1: "Plex Library", Directory } });
    }
    if (path === "/activities") {
      const active = [...readStatus()].filter(([, isBusy]) => isBusy).map(([id]) => id);
      const Activity = active.map((id, i) => activity(id, i, activityContext, sections));
      return ok({ MediaContainer: { size: active.length, Activity } });
    }
    const all = /^\/library\/sections\/([^/]+)\/all$/.exec(path);
    if (all) return items(req, sections.find((s) => s.key === all[1]));
    return undefined;
  }

  /** `GET /library/sections/{id}/all?type=&file=`: with `file`, every item in that file's folder. */
  function items(req: RecordedRequest, section: FakeSection | undefined): Reply {
    if (!section) return { status: 404, html: HTML_404 };
    const own = ITEM_TYPES[section.type];
    const asked = req.query.get("type");
    // Plex answers 500 to an untyped listing of a show section (it would have to mix shows, seasons and episodes).
    if (asked === null && section.type === "show") return { status: 500, html: HTML_500 };
    const file = req.query.get("file");
    const folder = file === null ? undefined : file.slice(0, file.lastIndexOf("/"));
    const matching =
      asked !== null && Number(asked) !== own.number
        ? []
        : library
            .files()
            .filter((f) => inside(section, f) && (folder === undefined || f.slice(0, f.lastIndexOf("/")) === folder));
    // Paged as Plex pages any container: X-Plex-Container-Start/-Size (query or header), with the total and offset.
    const start = pagingParam(req, "X-Plex-Container-Start");
    const size = pagingParam(req, "X-Plex-Container-Size");
    const paged = paging && size !== undefined;
    const page = paged ? matching.slice(start ?? 0, (start ?? 0) + size) : matching;
    const Role = metadataBytes > 0 ? cast(metadataBytes) : undefined;
    const Metadata = page.map((f) => ({ ...item(f, own.name, idFor(f)), ...(Role === undefined ? {} : { Role }) }));
    const counts = paged ? { totalSize: matching.length, offset: start ?? 0 } : {};
    return ok({ MediaContainer: { size: Metadata.length, ...counts, librarySectionID: Number(section.key), Metadata } });
  }

  function idFor(file: string): number {
    const known = itemIds.get(file);
    if (known !== undefined) return known;
    const id = 1000 + itemIds.size;
    itemIds.set(file, id);
    return id;
  }

  function writeRoute(req: RecordedRequest): Reply | undefined {
    const { method, path } = req;
    const refresh = /^\/library\/sections\/([^/]+)\/refresh$/.exec(path);
    if (refresh) return scan(req, sections.find((s) => s.key === refresh[1]));
    const trash = /^\/library\/sections\/([^/]+)\/emptyTrash$/.exec(path);
    if (trash && method === "PUT" && sections.some((s) => s.key === trash[1])) {
      emptied.push(trash[1] ?? "");
      return { status: 200 };
    }
    const analyze = /^\/library\/metadata\/(\d+)\/analyze$/.exec(path);
    if (analyze && method === "PUT") {
      analyzed.push(analyze[1] ?? "");
      return { status: 200 };
    }
    const itemRefresh = /^\/library\/metadata\/(\d+(?:,\d+)*)\/refresh$/.exec(path);
    if (itemRefresh && method === "PUT") {
      const keys = (itemRefresh[1] ?? "").split(",");
      const files = keys.map((key) => [...itemIds].find(([, id]) => String(id) === key)?.[0]);
      if (files.some((file) => file === undefined)) return { status: 404, html: HTML_404 };
      const duringScan = [...busy.values()].some((left) => left > 0);
      keys.forEach((ratingKey, i) => refreshed.push({ ratingKey, file: files[i], duringScan }));
      return { status: 200 };
    }
    return undefined;
  }

  function scan(req: RecordedRequest, section: FakeSection | undefined): Reply {
    // Plex answers 404 to PUT/POST here since 1.32.7.7484, and to an unknown section.
    if ((req.method !== "GET" && req.method !== "DELETE") || !section) return { status: 404, html: HTML_404 };
    if (req.method === "DELETE") return { status: 200 };
    const path = req.query.get("path") ?? "";
    const within = inside(section, path);
    scans.push({ sectionId: section.key, path, rawQuery: req.rawQuery, inside: within });
    if (within) library.scanned(path);
    if (within && scanBusyReads > 0) busy.set(section.key, scanBusyReads);
    return { status: 200 };
  }

  const server = createServer((incoming, res) => {
    const url = new URL(incoming.url ?? "/", "http://127.0.0.1");
    const rawQuery = (incoming.url ?? "").split("?")[1] ?? "";
    const req: RecordedRequest = {
      method: incoming.method ?? "GET",
      path: url.pathname,
      rawQuery,
      query: url.searchParams,
      headers: incoming.headers,
    };
    requests.push(req);
    incoming.resume();
    const answer = (): void => {
      if (down === "reset") return void incoming.socket.destroy();
      if (typeof down === "number") return send(res, req, { status: down, html: HTML_404 });
      send(res, req, route(req));
    };
    if (delayMs > 0) setTimeout(answer, delayMs).unref();
    else answer();
  });
  await new Promise<void>((resolve) => server.listen(0, options.listenHost ?? "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    token,
    requests,
    scans,
    emptied,
    analyzed,
    refreshed,
    library,
    setSections: (next) => void (sections = [...next]),
    setDown: (mode) => void (down = mode),
    setDelay: (ms) => void (delayMs = ms),
    failNext: (match, status, times) => void failures.push({ match, status, times }),
    setBusy: (sectionId, reads) => void busy.set(sectionId, reads),
    setScanBusyReads: (reads) => void (scanBusyReads = reads),
    setActivityContext: (present) => void (activityContext = present),
    setItemMetadataBytes: (bytes) => void (metadataBytes = bytes),
    setPaging: (honoured) => void (paging = honoured),
    close: () =>
      new Promise<void>((resolve) => {
        library.close();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

interface Reply {
  readonly status: number;
  readonly json?: unknown;
  readonly html?: string;
}

const ok = (json: unknown): Reply => ({ status: 200, json });

function send(res: ServerResponse, req: RecordedRequest, reply: Reply): void {
  if (reply.html !== undefined) return void res.writeHead(reply.status, { "Content-Type": "text/html" }).end(reply.html);
  if (reply.json === undefined) return void res.writeHead(reply.status).end();
  // JSON only when asked for; Plex's default is XML with the same names.
  if (!String(req.headers.accept ?? "").includes("application/json")) return sendXml(res, reply.status);
  res.writeHead(reply.status, { "Content-Type": "application/json" }).end(JSON.stringify(reply.json));
}

/** About `bytes` of JSON cast entries, shaped as Plex lists an item's actors. */
function cast(bytes: number) {
  const one = (n: number) => ({ id: 50_000 + n, filter: `actor=${String(50_000 + n)}`, tag: `Actor Name ${String(n)}`, tagKey: `5d77${String(n).padStart(20, "0")}`, role: `Character ${String(n)}` });
  const size = JSON.stringify(one(0)).length + 1;
  return Array.from({ length: Math.max(1, Math.round(bytes / size)) }, (_, n) => one(n));
}

function pagingParam(req: RecordedRequest, name: string): number | undefined {
  const value = req.query.get(name) ?? req.headers[name.toLowerCase()];
  return typeof value === "string" && /^\d+$/.test(value) ? Number(value) : undefined;
}

function inside(section: FakeSection, path: string): boolean {
  return section.locations.some((l) => path === l || path.startsWith(l.endsWith("/") ? l : `${l}/`));
}

/** One library item in Plex's JSON shape: the file under `Media[].Part[]`. */
function item(file: string, type: string, id: number) {
  const name = file.slice(file.lastIndexOf("/") + 1);
  return {
    ratingKey: String(id),
    key: `/library/metadata/${id}`,
    type,
    title: name.replace(/\.[^.]*$/, ""),
    Media: [{ id, Part: [{ id, key: `/library/parts/${id}/file`, file }] }],
  };
}

function directory(s: FakeSection, index: number, refreshing: boolean) {
  return {
    key: s.key,
    type: s.type,
    title: s.title,
    agent: "tv.plex.agents.movie",
    scanner: "Plex Movie",
    language: "en-US",
    uuid: `uuid-${s.key}`,
    refreshing,
    updatedAt: 1_700_000_000,
    scannedAt: 1_700_000_000,
    Location: s.locations.map((p, i) => ({ id: index * 10 + i + 1, path: p })),
  };
}

function activity(sectionId: string, index: number, withContext: boolean, sections: readonly FakeSection[]) {
  const title = sections.find((s) => s.key === sectionId)?.title ?? sectionId;
  return {
    uuid: `activity-${sectionId}`,
    type: "library.update.section",
    cancellable: false,
    userID: 1,
    title: `Scanning ${title}`,
    subtitle: "",
    progress: 42,
    // librarySectionID arrives as a string or a number; Context itself appears about a second after the start.
    ...(withContext ? { Context: { librarySectionID: index % 2 === 0 ? sectionId : Number(sectionId) } } : {}),
  };
}

function sendXml(res: ServerResponse, status: number): void {
  res
    .writeHead(status, { "Content-Type": "text/xml;charset=utf-8" })
    .end('<?xml version="1.0" encoding="UTF-8"?>\n<MediaContainer size="0"></MediaContainer>\n');
}
