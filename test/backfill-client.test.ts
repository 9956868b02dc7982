import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createArrClient, type ArrClient } from "../src/arr/arr-client.ts";
import { ArrApiError, ArrAuthError, ArrUnavailableError } from "../src/arr/arr-errors.ts";
import type { ArrType } from "../src/arr/arr-type.ts";
import { recordPaths, recordRequests } from "../src/backfill/history-record.ts";
import type { HistoryRecord } from "../src/arr/history-wire.ts";
import type { ScanRequest } from "../src/core/scan.ts";
import { resolveFile, type ArrFile } from "../src/intake/received-paths.ts";
import { parseWebhook } from "../src/intake/webhook.ts";
import { createPathMapper } from "../src/paths/mapping.ts";
import { captureLog } from "./support/capture-log.ts";
import { startFakeArr, type FakeArr, type FakeArrOptions } from "./support/fake-arr.ts";

/**
 * The *arr history client and the record → ScanRequest conversion, against the fake history API of every app
 * (Sonarr v3 and v4, Radarr, Lidarr, Readarr), and the fake's own faithfulness to ../shared/reference/arr-history.md.
 */
const FIXTURES = join(import.meta.dirname, "../src/intake/fixtures");
const table = JSON.parse(readFileSync(join(FIXTURES, "expected.json"), "utf8")) as { mappings: Record<string, string[]> };
const mapper = createPathMapper({ mappings: table.mappings });
const { log } = captureLog("warn");

const fakes: FakeArr[] = [];
afterEach(async () => {
  await Promise.all(fakes.splice(0).map((fake) => fake.close()));
});

async function fakeArr(options: FakeArrOptions): Promise<FakeArr> {
  const fake = await startFakeArr(options);
  fakes.push(fake);
  return fake;
}

function clientFor(fake: FakeArr, overrides: { apiKey?: string; type?: ArrType; timeoutMs?: number } = {}): ArrClient {
  return createArrClient({
    name: "myapp",
    type: overrides.type ?? fake.type,
    url: fake.url,
    apiKey: overrides.apiKey ?? fake.apiKey,
    timeoutMs: overrides.timeoutMs ?? 5_000,
    log,
  });
}

async function readAll(client: ArrClient, pageSize: number): Promise<HistoryRecord[]> {
  const out: HistoryRecord[] = [];
  for (let page = 1; ; page += 1) {
    const answer = await client.historyPage(page, pageSize);
    out.push(...answer.records);
    if (answer.records.length < pageSize) return out;
  }
}

async function caught(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected a rejection");
}

const APPS: readonly (FakeArrOptions & { label: string })[] = [
  { label: "Sonarr v4", type: "sonarr", sonarrVersion: "v4" },
  { label: "Sonarr v3", type: "sonarr", sonarrVersion: "v3" },
  { label: "Radarr", type: "radarr" },
  { label: "Lidarr", type: "lidarr" },
  { label: "Readarr", type: "readarr" },
];

describe.each(APPS)("history client against $label", (app) => {
  it("reads the version, and pages newest first across pages", async () => {
    const fake = await fakeArr(app);
    const client = clientFor(fake);
    expect(await client.status()).toEqual({ appName: fake.appName, version: fake.version });

    const start = Date.parse("2026-06-01T00:00:00Z");
    // Inserted out of date order: the sort is by date, not by id.
    const dates = Array.from({ length: 25 }, (_, i) => start + ((i * 7) % 25) * 60_000 + 250);
    for (const [i, date] of dates.entries()) fake.addImport({ path: `Show ${i}/file ${i}.mkv`, date });

    const first = await client.historyPage(1, 10);
    expect(first.totalRecords).toBe(25);
    const all = await readAll(client, 10);
    expect(all).toHaveLength(25);
    expect(new Set(all.map((r) => r.id)).size).toBe(25);
    const seen = all.map((r) => r.date);
    expect(seen).toEqual([...seen].sort((a, b) => b - a));
    // v4-era dates have whole seconds; Sonarr v3 keeps the fraction.
    const wholeSeconds = !(app.type === "sonarr" && app.sonarrVersion === "v3");
    expect(seen[0]).toBe(Math.max(...dates) - (wholeSeconds ? 250 : 0));
    expect(all.every((r) => r.eventType === "import" && r.importedPath?.startsWith("/"))).toBe(true);

    const history = fake.requests.filter((r) => r.path.endsWith("/history"));
    expect(history.length).toBeGreaterThan(1);
    for (const request of history) {
      expect(request.query.get("sortKey")).toBe("date");
      expect(request.query.get("sortDirection")).toBe("descending");
      expect(request.headers["x-api-key"]).toBe(fake.apiKey);
      expect(request.rawQuery).not.toContain(fake.apiKey);
    }
  });

  it("401 → ArrAuthError naming the setting, never the key", async () => {
    const fake = await fakeArr(app);
    const wrong = "wrongkey-0123456789abcdef";
    const error = await caught(clientFor(fake, { apiKey: wrong }).historyPage(1, 10));
    expect(error).toBeInstanceOf(ArrAuthError);
    expect(error.message).toBe("myapp rejected the API key: check ARR.myapp.API_KEY");
    expect(error.message).not.toContain(wrong);
    fake.setKey(wrong);
    expect((await clientFor(fake, { apiKey: wrong }).historyPage(1, 10)).totalRecords).toBe(0);
  });

  it("starting up → ArrUnavailableError with the app's message; down → ArrUnavailableError; back → reads", async () => {
    const fake = await fakeArr(app);
    fake.addImport({ path: "Show/a.mkv" });
    const client = clientFor(fake);
    fake.setStarting(true);
    const starting = await caught(client.historyPage(1, 10));
    expect(starting).toBeInstanceOf(ArrUnavailableError);
    expect(starting.message).toContain(`${fake.appName} is starting up, please try again later`);
    fake.setStarting(false);

    await fake.setDown(true);
    const down = await caught(client.status());
    expect(down).toBeInstanceOf(ArrUnavailableError);
    expect(down.message).toContain("myapp is unreachable");
    expect(down.message).toContain("ECONNREFUSED");
    await fake.setDown(false);
    expect((await client.historyPage(1, 10)).records).toHaveLength(1);
  });

  it("garbage → ArrApiError (HTML, another JSON shape, 404 from a wrong API root)", async () => {
    const fake = await fakeArr(app);
    const client = clientFor(fake);
    fake.answerNext(/history/, { status: 200, contentType: "text/html", body: "<html><body>Login</body></html>" });
    const html = await caught(client.historyPage(1, 10));
    expect(html).toBeInstanceOf(ArrApiError);
    expect(html.message).toContain("answered in a way autoscan does not understand");
    expect(html.message).toContain("ARR.myapp.URL");

    fake.answerNext(/history/, { status: 200, contentType: "application/json", body: JSON.stringify({ records: "no" }) });
    expect(await caught(client.historyPage(1, 10))).toBeInstanceOf(ArrApiError);

    fake.answerNext(/history/, { status: 200, contentType: "application/json", body: JSON.stringify({ totalRecords: 1, records: [{ id: 1, date: "yesterday", eventType: "grabbed" }] }) });
    const badDate = await caught(client.historyPage(1, 10));
    expect(badDate).toBeInstanceOf(ArrApiError);
    expect(badDate.message).toContain("records.0.date");

    const otherType: ArrType = fake.apiRoot === "/api/v3" ? "lidarr" : "radarr";
    const wrongRoot = await caught(clientFor(fake, { type: otherType }).historyPage(1, 10));
    expect(wrongRoot).toBeInstanceOf(ArrApiError);
    expect((wrongRoot as ArrApiError).status).toBe(404);
  });
});

describe("history client: edges", () => {
  it("a timeout and a 500 → ArrUnavailableError; a 400 → ArrApiError; the key never appears in a message", async () => {
    const fake = await fakeArr({ type: "radarr", apiKey: "secretkey-abcdef0123456789" });
    fake.setHang(true);
    const hung = await caught(clientFor(fake, { timeoutMs: 200 }).status());
    expect(hung).toBeInstanceOf(ArrUnavailableError);
    expect(hung.message).toContain("myapp did not answer GET /api/v3/system/status within 0.2 s");
    fake.setHang(false);
    fake.answerNext(/history/, { status: 500, contentType: "application/json", body: `{"message":"boom secretkey-abcdef0123456789"}` });
    const failed = await caught(clientFor(fake).historyPage(1, 10));
    expect(failed).toBeInstanceOf(ArrUnavailableError);
    fake.answerNext(/history/, { status: 400, contentType: "application/json", body: `{"message":"echo secretkey-abcdef0123456789"}` });
    const echoed = await caught(clientFor(fake).historyPage(1, 10));
    expect(echoed).toBeInstanceOf(ArrApiError);
    expect(echoed.message).not.toContain("secretkey-abcdef0123456789");
    expect(echoed.message).toContain("***");
  });

  it("an abort from the caller rejects with the caller's reason, not a classified error", async () => {
    const fake = await fakeArr({ type: "sonarr" });
    const controller = new AbortController();
    controller.abort(new Error("stopping"));
    const error = await caught(clientFor(fake).historyPage(1, 10, controller.signal));
    expect(error.message).toBe("stopping");
  });

  it("reads data keys in any case, unknown event types as other, and v3's 7-digit fractions", async () => {
    const fake = await fakeArr({ type: "sonarr" });
    const records = [
      { id: 7, date: "2026-06-21T09:37:52.1234567Z", eventType: "downloadFolderImported", seriesId: 3, data: { ImportedPath: "/tv/S/a.mkv", FILEID: "12" } },
      { id: 8, date: "2026-06-21T09:37:53Z", eventType: "somethingNew", data: { importedPath: "/tv/S/b.mkv" }, extra: { any: 1 } },
      { id: 9, date: "2026-06-21T09:37:54Z", eventType: "episodeFileRenamed", sourceTitle: "/tv/S/Season 1/c.mkv", data: { path: "/tv/S/Season 01/c.mkv", reason: null } },
    ];
    fake.answerNext(/history/, { status: 200, contentType: "application/json", body: JSON.stringify({ page: 1, pageSize: 10, totalRecords: 3, records }) });
    const page = await clientFor(fake).historyPage(1, 10);
    expect(page.records).toEqual([
      { id: 7, date: Date.parse("2026-06-21T09:37:52.123Z"), eventType: "import", appEventType: "downloadFolderImported", importedPath: "/tv/S/a.mkv", fileId: "12", itemId: 3 },
      { id: 8, date: Date.parse("2026-06-21T09:37:53Z"), eventType: "other", appEventType: "somethingNew" },
      { id: 9, date: Date.parse("2026-06-21T09:37:54Z"), eventType: "rename", appEventType: "episodeFileRenamed", previousPath: "/tv/S/Season 1/c.mkv", path: "/tv/S/Season 01/c.mkv" },
    ]);
  });
});

// ---- conversion: the same requests as the webhook --------------------------------------------------------------

interface Case {
  readonly app: FakeArrOptions;
  readonly fixture: string;
}
const CASES: readonly Case[] = [
  { app: { type: "sonarr" }, fixture: "sonarr/download-v3.json" },
  { app: { type: "sonarr", sonarrVersion: "v3" }, fixture: "sonarr/download-v3.json" },
  { app: { type: "sonarr" }, fixture: "sonarr/download-upgrade-v4.json" },
  { app: { type: "sonarr" }, fixture: "sonarr/download-import-complete-season-pack.json" },
  { app: { type: "sonarr" }, fixture: "sonarr/download-windows.json" },
  { app: { type: "sonarr" }, fixture: "sonarr/download-unc.json" },
  { app: { type: "sonarr" }, fixture: "sonarr/rename.json" },
  { app: { type: "sonarr", sonarrVersion: "v3" }, fixture: "sonarr/rename.json" },
  { app: { type: "sonarr" }, fixture: "sonarr/episode-file-delete.json" },
  { app: { type: "radarr" }, fixture: "radarr/download.json" },
  { app: { type: "radarr" }, fixture: "radarr/download-upgrade.json" },
  { app: { type: "radarr" }, fixture: "radarr/rename.json" },
  { app: { type: "radarr" }, fixture: "radarr/movie-file-delete.json" },
  { app: { type: "lidarr" }, fixture: "lidarr/download-upgrade.json" },
  { app: { type: "lidarr" }, fixture: "lidarr/rename.json" },
  { app: { type: "lidarr" }, fixture: "lidarr/track-file-delete.json" },
  { app: { type: "readarr" }, fixture: "readarr/download.json" },
  { app: { type: "readarr" }, fixture: "readarr/download-upgrade.json" },
  { app: { type: "readarr" }, fixture: "readarr/rename.json" },
  { app: { type: "readarr" }, fixture: "readarr/book-file-delete.json" },
];

type Body = Record<string, unknown>;

/** What the app writes to its history for the event this webhook reports (arr-history.md §4). */
function writeHistory(fake: FakeArr, body: Body): void {
  const folder = ((body.series ?? body.movie ?? body.artist ?? body.author) as { path?: string; folderPath?: string } | undefined) ?? {};
  const base = folder.path ?? folder.folderPath;
  const at = (file: ArrFile): string => {
    const resolved = resolveFile(base, file, "file", "folder");
    if ("reason" in resolved) throw new Error(resolved.reason);
    return resolved.path;
  };
  const list = (...keys: string[]): ArrFile[] =>
    keys.flatMap((key) => {
      const value = body[key];
      return Array.isArray(value) ? (value as ArrFile[]) : value ? [value as ArrFile] : [];
    });
  switch (body.eventType) {
    case "Download":
      // An upgrade: the replaced files' delete records (reason Upgrade) first, then the import records.
      for (const file of Array.isArray(body.deletedFiles) ? (body.deletedFiles as ArrFile[]) : []) fake.addDelete({ path: at(file), reason: "Upgrade" });
      for (const file of list("episodeFile", "episodeFiles", "movieFile", "trackFiles", "bookFiles")) fake.addImport({ path: at(file) });
      return;
    case "Rename":
      for (const file of list("renamedEpisodeFiles", "renamedMovieFiles", "renamedTrackFiles", "renamedBookFiles") as (ArrFile & {
        previousPath?: string;
        previousRelativePath?: string;
      })[]) {
        const to = at(file);
        // The app writes the old absolute path (`data.sourcePath`); a moved folder makes it differ from folder + relative.
        const from = file.previousPath ?? at({ relativePath: file.previousRelativePath });
        fake.addRename({ from, to });
      }
      return;
    default:
      for (const file of list("episodeFile", "movieFile", "trackFile", "bookFile")) fake.addDelete({ path: at(file), reason: "Manual" });
  }
}

function key(request: ScanRequest): string {
  return JSON.stringify([request.path, request.kind, request.deleted === true, request.receivedPath, request.source]);
}

describe("history records → the webhook's scan requests", () => {
  it.each(CASES)("$app.type $app.sonarrVersion: $fixture", async ({ app, fixture }) => {
    const body = JSON.parse(readFileSync(join(FIXTURES, fixture), "utf8")) as Body;
    const webhook = parseWebhook(body, { mapper });
    if (webhook.kind !== "scan") throw new Error(`${fixture} is not a scan`);

    const fake = await fakeArr(app);
    writeHistory(fake, body);
    const records = await readAll(clientFor(fake), 10);
    expect(records.length).toBeGreaterThan(0);
    const requests = records.flatMap((record) => recordRequests(record, { type: app.type, source: webhook.source, mapper }));

    // The same set of requests (a history row per episode or file repeats some; the queue merges those). A webhook's
    // Rename also names the renamed files (to refresh their items in place); backfill's renames scan the same folders.
    const renamedFile = (r: ScanRequest): boolean => webhook.event === "Rename" && r.kind === "file";
    expect([...new Set(requests.map(key))].sort()).toEqual([...new Set(webhook.requests.filter((r) => !renamedFile(r)).map(key))].sort());
    const folders = new Set(requests.map((r) => r.path));
    for (const file of webhook.requests.filter(renamedFile)) expect(folders).toContain(file.path.replace(/\/[^/]+$/, ""));
    const deleteEvent = { sonarr: "EpisodeFileDelete", radarr: "MovieFileDelete", lidarr: "TrackFileDelete", readarr: "BookFileDelete" }[app.type];
    const events = new Set(requests.map((r) => r.event));
    if (webhook.event === "Upgrade") expect(events).toEqual(new Set(["Download (backfill)", `${deleteEvent} (backfill)`]));
    else expect(events).toEqual(new Set([`${webhook.event} (backfill)`]));
  });

  it("a multi-episode file: one record per episode, same file and fileId, the same request each", async () => {
    const fake = await fakeArr({ type: "sonarr" });
    fake.addImport({ path: "/tv/The Expanse/Season 01/The Expanse - S01E01-E02.mkv", fileId: 77, downloadId: "abc" });
    expect(fake.addImport({ path: "x.mkv", items: 2 })).toHaveLength(2);
    const records = await readAll(clientFor(fake), 10);
    const multi = records.filter((r) => r.importedPath === "/tv/x.mkv");
    expect(multi).toHaveLength(2);
    expect(new Set(multi.map((r) => r.fileId)).size).toBe(1);
    const requests = multi.map((r) => recordRequests(r, { type: "sonarr", source: "Sonarr", mapper }));
    expect(requests[0]).toEqual(requests[1]);
    expect(records.find((r) => r.fileId === "77")?.downloadId).toBe("abc");
    const radarr = await fakeArr({ type: "radarr" });
    expect(() => radarr.addImport({ path: "x.mkv", items: 2 })).toThrow(/one import record per file/);
  });

  it("grabs, failures and retags give no request; a bad path gives none, with a reason", async () => {
    const fake = await fakeArr({ type: "lidarr" });
    fake.addGrab();
    fake.addOther({ eventType: "downloadFailed", data: { message: "failed" } });
    fake.addOther({ eventType: "trackFileRetagged", sourceTitle: "/music/A/b.flac" });
    const records = await readAll(clientFor(fake), 10);
    expect(records.map((r) => r.eventType)).toEqual(["other", "other", "other"]);
    for (const record of records) expect(recordRequests(record, { type: "lidarr", source: "Lidarr", mapper })).toEqual([]);

    const bad: HistoryRecord = { id: 5, date: 0, eventType: "import", appEventType: "trackFileImported", importedPath: "/music/../etc/passwd" };
    expect(recordRequests(bad, { type: "lidarr", source: "Lidarr", mapper })).toEqual([]);
    expect(recordPaths(bad, "lidarr")).toEqual({ ok: false, reason: "history record 5 (trackFileImported): 'data.importedPath' must not contain '..' segments" });
    const relative: HistoryRecord = { id: 6, date: 0, eventType: "delete", appEventType: "trackFileDeleted", deletedPath: "A/b.flac" };
    expect(recordPaths(relative, "lidarr").ok).toBe(false);
    const missing: HistoryRecord = { id: 7, date: 0, eventType: "import", appEventType: "trackFileImported" };
    expect(recordPaths(missing, "lidarr")).toEqual({ ok: false, reason: "history record 7 (trackFileImported): missing 'data.importedPath'" });
  });

  it("an Upgrade delete and an import in the same folder both give requests (the queue merges them)", async () => {
    const fake = await fakeArr({ type: "radarr" });
    fake.addDelete({ path: "/movies/Arrival (2016)/old.mkv", reason: "Upgrade" });
    fake.addImport({ path: "/movies/Arrival (2016)/new.mkv" });
    const records = await readAll(clientFor(fake), 10);
    const requests = records.flatMap((r) => recordRequests(r, { type: "radarr", source: "Radarr (4k)", mapper }));
    expect(requests).toEqual(
      expect.arrayContaining([
        { path: "/data/Movies/Arrival (2016)/old.mkv", kind: "file", deleted: true, source: "Radarr (4k)", event: "MovieFileDelete (backfill)", receivedPath: "/movies/Arrival (2016)/old.mkv" },
        { path: "/data/Movies/Arrival (2016)/new.mkv", kind: "file", source: "Radarr (4k)", event: "Download (backfill)", receivedPath: "/movies/Arrival (2016)/new.mkv" },
      ]),
    );
    expect(records.find((r) => r.eventType === "delete")?.reason).toBe("Upgrade");
  });
});

// ---- the fake itself ---------------------------------------------------------------------------------------------

async function raw(fake: FakeArr, path: string, headers: Record<string, string> = { "X-Api-Key": fake.apiKey }) {
  const response = await fetch(`${fake.url}${path}`, { headers });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

interface Paged {
  page: number;
  pageSize: number;
  sortKey: string;
  sortDirection: string;
  totalRecords: number;
  records: { id: number; date: string; eventType: string; data: Record<string, string>; sourceTitle: string; downloadId?: string }[];
}

describe("the fake *arr history API", () => {
  it("defaults to page 1 of 10, date descending, with X-Application-Version", async () => {
    const fake = await fakeArr({ type: "sonarr" });
    const start = Date.parse("2026-01-01T00:00:00Z");
    for (let i = 0; i < 15; i += 1) fake.addImport({ path: `S/${i}.mkv`, date: start + (14 - i) * 1000 });
    const answer = await raw(fake, "/api/v3/history");
    expect(answer.status).toBe(200);
    expect(answer.headers.get("x-application-version")).toBe(fake.version);
    const page = JSON.parse(answer.text) as Paged;
    expect({ ...page, records: page.records.length }).toEqual({ page: 1, pageSize: 10, sortKey: "date", sortDirection: "descending", totalRecords: 15, records: 10 });
    expect(page.records.map((r) => r.id)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    const record = page.records[0];
    expect(record?.date).toBe("2026-01-01T00:00:14Z");
    expect(record?.eventType).toBe("downloadFolderImported");
    expect(Object.keys(record?.data ?? {})).toEqual(expect.arrayContaining(["fileId", "droppedPath", "importedPath", "downloadClient"]));
    expect(Object.values(record?.data ?? {}).every((value) => typeof value === "string")).toBe(true);
    expect(record).not.toHaveProperty("language");
  });

  it("Sonarr v4 replaces other sort keys by date; v3 sorts ascending on a sortKey alone", async () => {
    const v4 = await fakeArr({ type: "sonarr" });
    const v3 = await fakeArr({ type: "sonarr", sonarrVersion: "v3" });
    for (const fake of [v4, v3]) {
      for (let i = 0; i < 3; i += 1) fake.addImport({ path: `S/${i}.mkv`, date: Date.UTC(2026, 0, 1, 0, 0, i, 123) });
    }
    const byId = JSON.parse((await raw(v4, "/api/v3/history?sortKey=id&sortDirection=ascending")).text) as Paged;
    expect(byId.sortKey).toBe("date");
    const asc = JSON.parse((await raw(v3, "/api/v3/history?sortKey=date")).text) as Paged;
    expect({ key: asc.sortKey, direction: asc.sortDirection, ids: asc.records.map((r) => r.id) }).toEqual({ key: "date", direction: "ascending", ids: [1, 2, 3] });
    const v4Default = JSON.parse((await raw(v4, "/api/v3/history?sortKey=date")).text) as Paged;
    expect(v4Default.records.map((r) => r.id)).toEqual([3, 2, 1]);
    expect(v4Default.records[0]?.date).toBe("2026-01-01T00:00:02Z");
    const v3Default = JSON.parse((await raw(v3, "/api/v3/history")).text) as Paged & { records: { language?: unknown }[] };
    expect(v3Default.records.map((r) => r.id)).toEqual([3, 2, 1]);
    expect(v3Default.records[0]?.date).toBe("2026-01-01T00:00:02.123Z");
    expect(v3Default.records[0]?.language).toEqual({ id: 1, name: "English" });
  });

  it("v4-era: the apikey query is checked first, then X-Api-Key, then Bearer; 401 has an empty body", async () => {
    const fake = await fakeArr({ type: "radarr", apiKey: "goodkey" });
    const good = { "X-Api-Key": "goodkey" };
    expect((await raw(fake, "/api/v3/system/status?apikey=wrong", good)).status).toBe(401);
    expect((await raw(fake, "/api/v3/system/status?ApiKey=goodkey", { "X-Api-Key": "wrong" })).status).toBe(200);
    expect((await raw(fake, "/api/v3/system/status", { Authorization: "Bearer goodkey" })).status).toBe(200);
    const denied = await raw(fake, "/api/v3/system/status", { "X-Api-Key": "wrong" });
    expect({ status: denied.status, body: denied.text }).toEqual({ status: 401, body: "" });
  });

  it("Sonarr v3: X-Api-Key first, then the ApiKey query in any case; 401 {error:Unauthorized}", async () => {
    const fake = await fakeArr({ type: "sonarr", sonarrVersion: "v3", apiKey: "goodkey" });
    expect((await raw(fake, "/api/v3/system/status?apikey=wrong", { "X-Api-Key": "goodkey" })).status).toBe(200);
    expect((await raw(fake, "/api/v3/system/status?APIKEY=goodkey", {})).status).toBe(200);
    expect((await raw(fake, "/api/v3/system/status", { Authorization: "Bearer goodkey" })).status).toBe(401);
    const denied = await raw(fake, "/api/v3/history", {});
    expect({ status: denied.status, body: denied.text }).toEqual({ status: 401, body: '{"error":"Unauthorized"}' });
  });

  it("starting up: 503 with the app's errorMessage, before the key is checked", async () => {
    const fake = await fakeArr({ type: "readarr" });
    fake.setStarting(true);
    const answer = await raw(fake, "/api/v1/history", {});
    expect({ status: answer.status, body: answer.text }).toEqual({ status: 503, body: '{"errorMessage":"Readarr is starting up, please try again later"}' });
  });

  it("event numbers per app: 6 is Sonarr's rename but Radarr's delete; events are camelCase strings", async () => {
    const sonarr = await fakeArr({ type: "sonarr" });
    const radarr = await fakeArr({ type: "radarr" });
    for (const fake of [sonarr, radarr]) {
      fake.addImport({ path: "A/a.mkv" });
      fake.addRename({ from: "A/old.mkv", to: "A/new.mkv" });
      fake.addDelete({ path: "A/gone.mkv", reason: "MissingFromDisk" });
      fake.addGrab({ downloadId: "dl1" });
    }
    const six = async (fake: FakeArr) => (JSON.parse((await raw(fake, "/api/v3/history?eventType=6")).text) as Paged).records.map((r) => r.eventType);
    expect(await six(sonarr)).toEqual(["episodeFileRenamed"]);
    expect(await six(radarr)).toEqual(["movieFileDeleted"]);
    const both = JSON.parse((await raw(radarr, "/api/v3/history?eventType=6&eventType=8&pageSize=50")).text) as Paged;
    expect(both.records.map((r) => r.eventType).sort()).toEqual(["movieFileDeleted", "movieFileRenamed"]);
    const deleted = both.records.find((r) => r.eventType === "movieFileDeleted");
    expect(deleted?.sourceTitle).toBe("/movies/A/gone.mkv");
    expect(deleted?.data.reason).toBe("MissingFromDisk");
    expect(deleted).not.toHaveProperty("downloadId");
    const renamed = both.records.find((r) => r.eventType === "movieFileRenamed");
    expect(renamed?.data).toMatchObject({ sourcePath: "/movies/A/old.mkv", path: "/movies/A/new.mkv", sourceRelativePath: "old.mkv", relativePath: "new.mkv" });
    expect((await raw(radarr, "/api/v3/history?eventType=movieFileDeleted")).status).toBe(400);
    const grab = JSON.parse((await raw(radarr, "/api/v3/history?downloadId=dl1")).text) as Paged;
    expect(grab.records.map((r) => r.eventType)).toEqual(["grabbed"]);
  });

  it("since: ascending, unpaged, every record from the date on; v3 wants the date", async () => {
    const fake = await fakeArr({ type: "lidarr" });
    for (let i = 0; i < 30; i += 1) fake.addImport({ path: `A/${i}.flac`, date: Date.UTC(2026, 0, 1, 0, i) });
    const answer = JSON.parse((await raw(fake, "/api/v1/history/since?date=2026-01-01T00:10:00Z")).text) as { id: number }[];
    expect(answer.map((r) => r.id)).toEqual(Array.from({ length: 20 }, (_, i) => i + 11));
    expect((JSON.parse((await raw(fake, "/api/v1/history/since")).text) as unknown[]).length).toBe(30);
    const v3 = await fakeArr({ type: "sonarr", sonarrVersion: "v3" });
    expect((await raw(v3, "/api/v3/history/since")).status).toBe(400);
  });

  it("include flags embed the item with its folder; deleting the item drops its history (joins hide it)", async () => {
    const fake = await fakeArr({ type: "readarr" });
    fake.addImport({ path: "Ursula K. Le Guin/The Dispossessed (1974)/b.epub" });
    fake.addImport({ path: "Iain M. Banks/Excession (1996)/e.epub" });
    const page = JSON.parse((await raw(fake, "/api/v1/history?includeAuthor=true")).text) as { records: { author?: { path: string } }[] };
    expect(page.records.map((r) => r.author?.path).sort()).toEqual(["/books/Iain M. Banks", "/books/Ursula K. Le Guin"]);
    expect(JSON.parse((await raw(fake, "/api/v1/history")).text)).not.toHaveProperty("records.0.author");
    expect(fake.deleteItem("Iain M. Banks/x")).toBe(1);
    expect((JSON.parse((await raw(fake, "/api/v1/history")).text) as Paged).totalRecords).toBe(1);
  });

  it("ties: records of the same instant come in no particular order, but every page together holds each once", async () => {
    const fake = await fakeArr({ type: "radarr" });
    fake.addMany(30, (i) => ({ kind: "import", path: `M ${i}/m.mkv`, date: "2026-01-01T00:00:00Z" }));
    const ids = (await readAll(clientFor(fake), 10)).map((r) => r.id);
    expect([...ids].sort((a, b) => a - b)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    expect(ids).not.toEqual([...ids].sort((a, b) => a - b));
    expect(ids).not.toEqual([...ids].sort((a, b) => b - a));
  });

  it("holds 100,000 records and pages them without trouble", async () => {
    const fake = await fakeArr({ type: "sonarr" });
    const start = Date.parse("2025-01-01T00:00:00Z");
    const { first, last } = fake.addMany(100_000, (i) =>
      i % 4 === 3 ? { kind: "grab", date: start + i * 1000 } : { kind: "import", path: `Show ${i % 500}/Season 01/e${i}.mkv`, date: start + i * 1000 },
    );
    expect({ first, last, size: fake.size }).toEqual({ first: 1, last: 100_000, size: 100_000 });
    const client = clientFor(fake);
    const newest = await client.historyPage(1, 1000);
    expect(newest.totalRecords).toBe(100_000);
    expect(newest.records[0]?.id).toBe(100_000);
    const oldest = await client.historyPage(100, 1000);
    expect(oldest.records.at(-1)?.id).toBe(1);
    expect(oldest.records.filter((r) => r.eventType === "import")).toHaveLength(750);
  });
});
