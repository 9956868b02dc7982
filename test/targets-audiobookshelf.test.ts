import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { parseConfigText } from "../src/config/load.ts";
import { systemClock } from "../src/core/clock.ts";
import { ConfigError, TargetAuthError } from "../src/core/errors.ts";
import type { ScanContext, Target } from "../src/core/target.ts";
import { targetsChecks } from "../src/ops/doctor/targets.ts";
import { AbsScanRunningError, createAudiobookshelfTarget } from "../src/targets/audiobookshelf/audiobookshelf-target.ts";
import { createTargetsFromConfig } from "../src/targets/from-config.ts";
import { captureLog } from "./support/capture-log.ts";
import { startFakeAudiobookshelf, type FakeAudiobookshelf } from "./support/fake-audiobookshelf.ts";
import { createManualClock } from "./support/manual-clock.ts";
import { SCAN_DELAY_MS, createQueueHarness, fileRequest } from "./support/queue-harness.ts";

/**
 * The Audiobookshelf target (issue 41, part 3) against a fake built from refresh-fastpath-targets.md §5: the wrapped
 * library list, the watcher route when the library's watcher is on, the library scan when it is off, a running scan
 * that would drop the request (autoscan holds it and sends it after), the items API as the landed check, a key of a
 * plain user refused with the fix, the config keys and the doctor's lines.
 */
const PASS = "0123456789abcdef0123";
const USER_KEY = "eyJhbGciOiJIUzI1NiJ9.user-key-not-admin";
const BOOKS = { id: "lib-books-0001", name: "Audiobooks", folders: ["/audiobooks"] };
const PODCASTS = { id: "lib-pods-0002", name: "Podcasts", folders: ["/podcasts"], mediaType: "podcast" as const, disableWatcher: true };

let abs: FakeAudiobookshelf;
beforeAll(async () => {
  abs = await startFakeAudiobookshelf({ libraries: [BOOKS, PODCASTS], keys: { [USER_KEY]: { username: "listener", type: "user" } }, scans: "held" });
});
afterAll(async () => {
  await abs.close();
});

function context(files: string[], deleted: string[] = []): ScanContext {
  const sources = [...files.map((path) => ({ source: "Readarr", event: "Download", path })), ...deleted.map((path) => ({ source: "Readarr", event: "BookFileDelete", path, deleted: true }))];
  return { id: 1, sources, files: [...files, ...deleted], priority: 0, attempt: 1, signal: new AbortController().signal };
}

function target(key = abs.key, url = abs.url): Target {
  return createAudiobookshelfTarget({ name: "abs", url, apiKey: key, clock: systemClock, log: captureLog().log });
}

async function rejection(promise: Promise<unknown>): Promise<Error> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof Error)) throw new Error(`expected a rejection, got ${String(error)}`);
  return error;
}

describe("Audiobookshelf target", () => {
  it("reads the wrapped {libraries:[…]} list with the Bearer key, and skips a folder in no library", async () => {
    const before = abs.requests.length;
    const { log, records } = captureLog();
    const t = createAudiobookshelfTarget({ name: "abs", url: abs.url, apiKey: abs.key, clock: systemClock, log });
    const skipped = await t.scan("/comics/Some Comic", context(["/comics/Some Comic/1.cbz"]));
    expect(skipped).toEqual({ status: "skipped", reason: "the folder is in no abs library" });
    const asked = abs.requests.slice(before);
    const list = asked.find((r) => r.path === "/api/libraries");
    expect(list?.headers.authorization).toBe(`Bearer ${abs.key}`);
    expect(list?.rawQuery).toBe("");
    expect(asked.some((r) => r.path.endsWith("/scan") || r.path === "/api/watcher/update")).toBe(false);
    // Which call each library gets, said once at the first listing.
    expect(records.filter((r) => r.level === 30).map((r) => r.msg)).toEqual([
      "Audiobookshelf 'abs': new files of Audiobooks go to its watcher; Podcasts gets library scans (watcher off)",
    ]);
  });

  it("sends each new file to the watcher when the library's watcher is on, and the files land", async () => {
    const book = "/audiobooks/Ursula K. Le Guin/A Wizard of Earthsea";
    const files = [`${book}/01.mp3`, `${book}/02.mp3`];
    files.forEach((file) => abs.addFile(file));
    const t = target();
    const outcome = await t.scan(book, context(files, [`${book}/old.mp3`]));
    expect(outcome).toEqual({ status: "scanned", detail: "library 'Audiobooks': watcher update (3 files)" });
    expect(abs.watcherUpdates.slice(-3)).toEqual([
      { libraryId: BOOKS.id, path: files[0], type: "add" },
      { libraryId: BOOKS.id, path: files[1], type: "add" },
      { libraryId: BOOKS.id, path: `${book}/old.mp3`, type: "unlink" },
    ]);
    expect(abs.scansStarted).not.toContain(BOOKS.id);
    const found = await t.lookup!.find([...files, `${book}/03.mp3`], new AbortController().signal);
    expect(Object.fromEntries(found)).toEqual({ [files[0]!]: true, [files[1]!]: true, [`${book}/03.mp3`]: false });
  });

  it("asks for the library scan when the library's watcher is off (the watcher route would answer 200 and do nothing)", async () => {
    const episode = "/podcasts/Some Show/ep-101.mp3";
    abs.addFile(episode);
    const t = target();
    const outcome = await t.scan("/podcasts/Some Show", context([episode]));
    expect(outcome).toEqual({ status: "scanned", detail: "library 'Podcasts': library scan (its file watcher is off)" });
    expect(abs.scansStarted).toEqual([PODCASTS.id]);
    expect(abs.ignored).toEqual([]);
    // Held: the scan runs. Its end adds what it saw.
    expect((await t.lookup!.find([episode], new AbortController().signal)).get(episode)).toBe(false);
    abs.finishScans();
    expect((await t.lookup!.find([episode], new AbortController().signal)).get(episode)).toBe(true);
    // Deleted: Audiobookshelf keeps the item, marked missing; the look counts it gone.
    abs.removeFile(episode);
    await t.scan("/podcasts/Some Show", context([], [episode]));
    abs.finishScans();
    expect(abs.itemPaths(PODCASTS.id)).toContain("/podcasts/Some Show");
    expect((await t.lookup!.find([episode], new AbortController().signal)).get(episode)).toBe(false);
  });

  it("does not send a library scan Audiobookshelf would drop while one runs, and sends it once that scan ended", async () => {
    // Audiobookshelf's own scheduled scan starts before the new file is on disk: it will not see it.
    abs.startScan(PODCASTS.id);
    const episode = "/podcasts/Other Show/ep-7.mp3";
    abs.addFile(episode);
    const t = target();
    // What a relay without the look gets: 200, and nothing (the request is dropped without a word).
    const raw = await fetch(`${abs.url}/api/libraries/${PODCASTS.id}/scan`, { method: "POST", headers: { Authorization: `Bearer ${abs.key}` } });
    expect(raw.status).toBe(200);
    expect(abs.dropped).toEqual([PODCASTS.id]);

    const error = await rejection(t.scan("/podcasts/Other Show", context([episode])));
    expect(error).toBeInstanceOf(AbsScanRunningError);
    expect(error.message).toBe("Audiobookshelf 'abs' is already scanning library 'Podcasts', and drops a scan request unseen while it does");
    expect(abs.dropped).toEqual([PODCASTS.id]);
    abs.finishScans();
    expect((await t.lookup!.find([episode], new AbortController().signal)).get(episode)).toBe(false);

    // The queue's retry, after the running scan ended: a scan of its own that sees the file.
    await expect(t.scan("/podcasts/Other Show", context([episode]))).resolves.toMatchObject({ status: "scanned" });
    abs.finishScans();
    expect((await t.lookup!.find([episode], new AbortController().signal)).get(episode)).toBe(true);
  });

  it("recovers through the queue: the delivery held while Audiobookshelf scans goes out after that scan, and lands", async () => {
    const server = await startFakeAudiobookshelf({ libraries: [PODCASTS], scans: "held" });
    const clock = createManualClock();
    const t = createAudiobookshelfTarget({ name: "abs", url: server.url, apiKey: server.key, clock, log: captureLog().log });
    const h = await createQueueHarness({ targets: [t], clock });
    try {
      const episode = "/podcasts/Queued Show/ep-1.mp3";
      server.startScan(PODCASTS.id); // its own schedule, before the file came
      server.addFile(episode);
      await h.touch(episode);
      await h.enqueue(fileRequest(episode, "Readarr"));
      await h.advance(SCAN_DELAY_MS);
      // The calls are real HTTP: wait for the delivery's failure to be logged (the dispatcher records it first).
      await vi.waitFor(() => expect(h.logs.messages().find((m) => m.includes("is already scanning library 'Podcasts'"))).toMatch(/Retrying in \d+ seconds/));
      expect(server.scansStarted).toEqual([PODCASTS.id]);
      expect(server.dropped).toEqual([]);
      expect(await h.queue.pendingCount()).toBe(1);

      server.finishScans();
      await h.advance(60_000);
      await vi.waitFor(async () => expect(await h.queue.pendingCount()).toBe(0));
      expect(server.scansStarted).toEqual([PODCASTS.id, PODCASTS.id]);
      expect((await h.queue.listHistory())[0]).toMatchObject({ state: "done", targets: [{ target: "abs" }] });
      server.finishScans();
      expect(server.itemPaths(PODCASTS.id)).toEqual(["/podcasts/Queued Show"]);
    } finally {
      await h.close();
      await server.close();
    }
  });

  it("refreshes in place by rescanning the book that holds the file, each book once, never the library", async () => {
    const book = "/audiobooks/Refresh Author/Refreshed Book";
    const loose = "/audiobooks/Loose Book.m4b";
    for (const file of [`${book}/01.mp3`, `${book}/02.mp3`, loose]) abs.addFile(file);
    const t = target();
    await t.scan(book, context([`${book}/01.mp3`, `${book}/02.mp3`]));
    await t.scan("/audiobooks", context([loose]));
    const scans = abs.scansStarted.length;
    const outcome = await t.refresher!.refresh([`${book}/01.mp3`, `${book}/02.mp3`, loose, "/audiobooks/Nobody/x.mp3"], "file", new AbortController().signal);
    expect(abs.itemScans).toEqual([book]);
    expect(outcome.refreshed).toBe(1);
    expect(outcome.missing).toEqual(["/audiobooks/Nobody/x.mp3"]);
    expect(outcome.detail).toMatch(/^rescanned item [0-9a-f]{32} updated; 1 single-file book\(s\) not rescanned \(Audiobookshelf rescans folder items only\)$/);
    expect(abs.scansStarted).toHaveLength(scans);
  });

  it("refuses a key of a user who is not an admin, naming the fix, before any scan is sent", async () => {
    const { log, records } = captureLog();
    const t = createAudiobookshelfTarget({ name: "abs", url: abs.url, apiKey: USER_KEY, clock: systemClock, log });
    const before = abs.requests.length;
    const error = await rejection(t.scan("/audiobooks/X", context(["/audiobooks/X/1.mp3"])));
    expect(error).toBeInstanceOf(TargetAuthError);
    expect(error.message).toContain("the key in TARGETS.abs.API_KEY acts as 'listener' (account type 'user'), and only admin and root users may scan.");
    expect(error.message).toContain("Settings → API Keys → Add API Key");
    expect(error.message).not.toContain(USER_KEY);
    expect(abs.requests.slice(before).some((r) => r.method === "POST" && r.path !== "/api/authorize")).toBe(false);
    expect(JSON.stringify(records)).not.toContain(USER_KEY);
    // A key it does not know at all: the availability probe says which setting to fix.
    const unknown = createAudiobookshelfTarget({ name: "abs", url: abs.url, apiKey: "not-a-key", clock: systemClock, log });
    await expect(unknown.isAvailable()).resolves.toBe(false);
    expect(records.map((r) => r.msg)).toContain("Audiobookshelf 'abs' rejected the key: check TARGETS.abs.API_KEY");
  });

  it("uses the library scan for every library when the server turned its watcher off", async () => {
    const server = await startFakeAudiobookshelf({ libraries: [BOOKS], scannerDisableWatcher: true });
    try {
      const file = "/audiobooks/Author/Book/01.m4b";
      server.addFile(file);
      const outcome = await target(server.key, server.url).scan("/audiobooks/Author/Book", context([file]));
      expect(outcome).toEqual({ status: "scanned", detail: "library 'Audiobooks': library scan (its file watcher is off)" });
      expect(server.watcherUpdates).toEqual([]);
      expect(server.scansStarted).toEqual([BOOKS.id]);
      expect(server.itemPaths(BOOKS.id)).toEqual(["/audiobooks/Author/Book"]);
    } finally {
      await server.close();
    }
  });
});

describe("Audiobookshelf from config.json", () => {
  const parse = (targets: Record<string, unknown>) => parseConfigText(JSON.stringify({ SERVER_PASS: PASS, TARGETS: targets }), "/c/config.json", {}).config;
  const problems = (targets: Record<string, unknown>): string[] => {
    try {
      parse(targets);
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      return [...(error as ConfigError & { problems: string[] }).problems];
    }
    throw new Error("the config was accepted");
  };

  it("takes TYPE, URL, API_KEY and PATH_MAPPINGS, and says what is wrong without echoing a key", () => {
    expect(problems({ abs: { TYPE: "audiobookshelf", URL: "http://abs:80" } })).toEqual([
      'TARGETS.abs.API_KEY: an "audiobookshelf" target needs API_KEY (an API key of an admin user, Audiobookshelf 2.26.0 or newer: Settings → API Keys).',
    ]);
    expect(problems({ abs: { TYPE: "audiobookshelf", URL: "http://abs:80", TOKEN: "secret-k3y" } })).toEqual([
      'TARGETS.abs.API_KEY: an "audiobookshelf" target needs API_KEY (an API key of an admin user, Audiobookshelf 2.26.0 or newer: Settings → API Keys); its key goes in API_KEY, not TOKEN.',
    ]);
    const misplaced = problems({ jf: { TYPE: "jellyfin", URL: "http://jf:8096", TOKEN: "t", API_KEY: "secret-k3y" } }).join("\n");
    expect(misplaced).toContain('TARGETS.jf.API_KEY: API_KEY is the key of an "audiobookshelf" target; a "jellyfin" target takes TOKEN');
    expect(misplaced).not.toContain("secret-k3y");
  });

  it("builds the target in its own path form", async () => {
    const config = parse({ abs: { TYPE: "Audiobookshelf", URL: abs.url, API_KEY: abs.key, PATH_MAPPINGS: { "/audiobooks/": ["/mnt/media/Books/"] } } });
    const built = createTargetsFromConfig({ config, clock: systemClock, log: captureLog().log });
    try {
      const t = built.targets[0]!;
      expect(t.name).toBe("abs");
      const file = "/audiobooks/Mapped Author/Mapped Book/01.mp3";
      abs.addFile(file);
      await expect(t.scan("/mnt/media/Books/Mapped Author/Mapped Book", context(["/mnt/media/Books/Mapped Author/Mapped Book/01.mp3"]))).resolves.toMatchObject({ status: "scanned" });
      expect(abs.watcherUpdates.at(-1)).toEqual({ libraryId: BOOKS.id, path: file, type: "add" });
      const found = await t.lookup!.find(["/mnt/media/Books/Mapped Author/Mapped Book/01.mp3"], new AbortController().signal);
      expect([...found.values()]).toEqual([true]);
    } finally {
      built.close();
    }
  });
});

describe("autoscan doctor on an Audiobookshelf target", () => {
  async function lines(entry: Record<string, unknown>) {
    const config = parseConfigText(JSON.stringify({ SERVER_PASS: PASS, TARGETS: { abs: { TYPE: "audiobookshelf", ...entry } } }), "/c/config.json", {}).config;
    const findings = { sections: [{ key: "1", title: "Books", type: "artist", locations: ["/mnt/media/Books"] }] } as unknown as Parameters<typeof targetsChecks>[2];
    return targetsChecks(config, false, findings, new AbortController().signal);
  }

  it("checks the version, an admin key, how each library gets new files, and that the mapped folders are library folders", async () => {
    const checks = await lines({ URL: abs.url, API_KEY: abs.key, PATH_MAPPINGS: { "/audiobooks/": ["/mnt/media/Books/"] } });
    const byId = Object.fromEntries(checks.map((c) => [c.id, c]));
    expect(byId["target:abs"]).toMatchObject({ status: "ok", detail: `Audiobookshelf 2.36.0 answers at ${abs.url}.` });
    expect(byId["target:abs.key"]).toMatchObject({
      status: "ok",
      detail: "Audiobookshelf accepted TARGETS.abs.API_KEY (acts as root 'root'; new files of Audiobooks go to its watcher; Podcasts gets library scans (watcher off)).",
    });
    expect(byId["target:abs.libraries"]).toMatchObject({ status: "ok", detail: "2 libraries: Audiobooks, Podcasts." });
    expect(byId["target:abs.library:/audiobooks"]).toMatchObject({ status: "ok", detail: "'/audiobooks' (Audiobooks) is reached through the mapping '/audiobooks/'." });
    expect(byId["target:abs.library:/podcasts"]?.status).toBe("warn");
    expect(JSON.stringify(checks)).not.toContain(abs.key);
  });

  it("refuses a plain user's key with the fix, and a server too old for API keys", async () => {
    const user = await lines({ URL: abs.url, API_KEY: USER_KEY });
    const key = user.find((c) => c.id === "target:abs.key");
    expect(key).toMatchObject({
      status: "error",
      detail: "Audiobookshelf accepted TARGETS.abs.API_KEY, but it acts as 'listener' (account type 'user'): Audiobookshelf refuses scans (403) from anyone but admin and root users.",
    });
    expect(key?.fix).toContain("Create an API key that acts as an admin (or the root) user");
    expect(user.find((c) => c.id === "target:abs.libraries")?.status).toBe("skip");
    expect(JSON.stringify(user)).not.toContain(USER_KEY);

    const old = await startFakeAudiobookshelf({ version: "2.25.1", libraries: [BOOKS] });
    try {
      const checks = await lines({ URL: old.url, API_KEY: old.key });
      expect(checks.find((c) => c.id === "target:abs.key")).toMatchObject({
        status: "error",
        detail: "Audiobookshelf 2.25.1 takes no API keys (they came in 2.26.0).",
        fix: "Upgrade Audiobookshelf to 2.26.0 or newer, then create an API key of an admin user (Settings → API Keys → Add API Key) and put it in TARGETS.abs.API_KEY.",
      });
    } finally {
      await old.close();
    }
    const wrong = await lines({ URL: abs.url, API_KEY: "nope" });
    expect(wrong.find((c) => c.id === "target:abs.key")).toMatchObject({ status: "error", detail: `Audiobookshelf rejected TARGETS.abs.API_KEY (401 at ${abs.url}).` });
  });
});
