import { afterEach, describe, expect, it } from "vitest";
import { createDriveHarness, type Harness } from "./support/drive-harness.ts";

/** The Drive monitor end to end: real @googleapis/drive + google-auth-library against the fake Google. */
let h: Harness;
afterEach(async () => {
  await h?.close();
});

describe("Google Drive monitor: change feed", () => {
  it("polls every interval once started, and stops cleanly", async () => {
    h = await createDriveHarness({ realTimeIntervalMs: 30 });
    await h.monitor.start();
    expect(h.monitor.state).toBe("running");
    expect(h.messages()).toContain("Google Drive changes monitor started.");
    h.google.drive.addFile("Live (2025).mkv", h.google.drive.ensureFolders("Media/Movies/Live (2025)"));
    for (let i = 0; i < 200 && h.scanned().length === 0; i++) await new Promise((r) => setTimeout(r, 25));
    expect(h.scanned()).toEqual(["/data/Media/Movies/Live (2025)/Live (2025).mkv"]);
    await h.monitor.stop();
    expect(h.monitor.state).toBe("stopped");
    const calls = h.google.calls.changes;
    await new Promise((r) => setTimeout(r, 100));
    expect(h.google.calls.changes).toBe(calls);
  });

  it("starts from the current page token: history is never replayed", async () => {
    h = await createDriveHarness();
    const movies = h.google.drive.ensureFolders("Media/Movies/Old (1999)");
    h.google.drive.addFile("Old (1999).mkv", movies);
    await h.monitor.pollOnce();
    expect(h.batches).toEqual([]);
    expect(h.messages()).toContain("Google Drive access token was successfully validated.");

    const folder = h.google.drive.ensureFolders("Media/Movies/New (2024)");
    h.google.drive.addFile("New (2024).mkv", folder);
    await h.monitor.pollOnce();
    expect(h.batches).toEqual([
      [
        {
          path: "/data/Media/Movies/New (2024)/New (2024).mkv",
          kind: "file",
          source: "Google Drive",
          event: "Download",
          receivedPath: "My Drive/Media/Movies/New (2024)/New (2024).mkv",
        },
      ],
    ]);
  });

  it("asks the feed with the parameters the reference lists (pageSize 1000, removed included)", async () => {
    h = await createDriveHarness();
    await h.monitor.pollOnce();
    h.google.drive.addFile("a.mkv", h.google.drive.ensureFolders("Media/TV"));
    await h.monitor.pollOnce();
    const list = h.google.requests.filter((r) => r.route === "changes").at(-1)?.query;
    expect(list?.get("pageSize")).toBe("1000");
    expect(list?.get("includeRemoved")).toBe("true");
    expect(list?.get("fields")).toContain("file(");
    expect(list?.get("driveId")).toBeNull();
  });

  it("commits a page token only after the sink accepted the page: a refused page is read again", async () => {
    h = await createDriveHarness();
    await h.monitor.pollOnce();
    h.google.drive.addFile("Show S01E01.mkv", h.google.drive.ensureFolders("Media/TV/Show/Season 1"));
    h.refuseNext(1);
    await expect(h.monitor.pollOnce()).rejects.toThrow("queue unavailable");
    expect(h.batches).toEqual([]);
    await h.monitor.pollOnce();
    expect(h.scanned()).toEqual(["/data/Media/TV/Show/Season 1/Show S01E01.mkv"]);
  });

  it("a restart resumes from the stored token: a crash between pages re-reads the unfinished page, never skips one", async () => {
    h = await createDriveHarness({ pageSize: 2 });
    const season = h.google.drive.ensureFolders("Media/TV/Show/Season 1");
    await h.monitor.pollOnce();
    await h.monitor.pollOnce(); // folders are history now; the cache learns them on demand
    for (let e = 1; e <= 4; e++) h.google.drive.addFile(`Show S01E0${e}.mkv`, season);
    // Two pages of two files: the first is accepted, then the queue fails ("crash").
    h.refuseAfter(1);
    await expect(h.monitor.pollOnce()).rejects.toThrow("queue unavailable");
    const before = h.scanned();
    expect(before).toHaveLength(2);

    const again = await h.restart();
    h = again;
    await again.monitor.pollOnce();
    const after = again.scanned();
    const all = [...new Set([...before, ...after])].sort();
    expect(all).toEqual([1, 2, 3, 4].map((e) => `/data/Media/TV/Show/Season 1/Show S01E0${e}.mkv`));
    // Nothing accepted before the crash was sent again.
    expect(after.filter((p) => before.includes(p))).toEqual([]);
  });

  it("ignores folders, trashed and removed items, metadata-only changes; rescans content changes", async () => {
    h = await createDriveHarness();
    await h.monitor.pollOnce();
    const d = h.google.drive;
    const folder = d.ensureFolders("Media/Movies/A (2020)");
    const file = d.addFile("A (2020).mkv", folder);
    const gone = d.addFile("B.mkv", folder);
    await h.monitor.pollOnce();
    expect(h.scanned()).toHaveLength(2);

    d.touchMetadata(file);
    d.trash(gone);
    d.addFolder("Extras", folder);
    await h.monitor.pollOnce();
    expect(h.scanned()).toHaveLength(2);

    d.touch(file, "new content");
    await h.monitor.pollOnce();
    expect(h.scanned()).toEqual(["/data/Media/Movies/A (2020)/A (2020).mkv", "/data/Media/Movies/A (2020)/B.mkv", "/data/Media/Movies/A (2020)/A (2020).mkv"]);

    d.remove(file);
    await h.monitor.pollOnce();
    expect(h.scanned()).toHaveLength(3);
    expect(h.messages().some((m) => m.startsWith(`Removed '${file}' from cache`))).toBe(true);
  });

  it("follows folder renames and moves from the cache, without asking Drive again", async () => {
    h = await createDriveHarness();
    await h.monitor.pollOnce();
    const d = h.google.drive;
    const movies = d.ensureFolders("Media/Movies");
    const film = d.addFolder("Film (2021)", movies);
    d.addFile("Film (2021).mkv", film);
    await h.monitor.pollOnce();
    h.google.resetCalls();

    d.rename(film, "Film (2021) [1080p]");
    d.addFile("Film (2021) extra.mkv", film);
    const tv = d.ensureFolders("Media/TV");
    const show = d.addFolder("Show", movies);
    d.move(show, tv);
    d.addFile("Show S01E01.mkv", show);
    await h.monitor.pollOnce();
    expect(h.scanned().slice(1)).toEqual([
      "/data/Media/Movies/Film (2021) [1080p]/Film (2021) extra.mkv",
      "/data/Media/TV/Show/Show S01E01.mkv",
    ]);
    expect(h.google.calls["files.get"]).toBe(0);
  });

  it("applies ALLOWED paths, extensions and MIME prefixes with plex_autoscan's semantics", async () => {
    h = await createDriveHarness({
      filter: { filePaths: ["my drive/media/movies/"], fileExtensions: true, fileExtensionsList: [".MKV"], mimeTypes: true, mimeTypesList: ["video"] },
    });
    await h.monitor.pollOnce();
    const d = h.google.drive;
    const movies = d.ensureFolders("Media/Movies/X");
    const other = d.ensureFolders("Media/Books");
    d.addFile("x.mkv", movies);
    d.addFile("x.nfo", movies, { mimeType: "text/plain" });
    d.addFile("x.sub", movies, { mimeType: "video/mpeg" });
    d.addFile("y.mkv", other);
    d.addFile("doc.mkv", movies, { mimeType: "application/octet-stream" });
    await h.monitor.pollOnce();
    expect(h.scanned()).toEqual(["/data/Media/Movies/X/x.mkv"]);
  });

  it("an empty FILE_PATHS lets nothing through", async () => {
    h = await createDriveHarness({ filter: { filePaths: [] } });
    await h.monitor.pollOnce();
    h.google.drive.addFile("x.mkv", h.google.drive.ensureFolders("Media/Movies"));
    await h.monitor.pollOnce();
    expect(h.scanned()).toEqual([]);
  });

  it("logs an unmapped drive folder once, with the SERVER_PATH_MAPPINGS hint", async () => {
    h = await createDriveHarness({ filter: { filePaths: ["My Drive/"] } });
    await h.monitor.pollOnce();
    const folder = h.google.drive.ensureFolders("Elsewhere/Movies");
    h.google.drive.addFile("a.mkv", folder);
    h.google.drive.addFile("b.mkv", folder);
    await h.monitor.pollOnce();
    expect(h.scanned()).toEqual([]);
    const hints = h.messages().filter((m) => m.includes("SERVER_PATH_MAPPINGS"));
    expect(hints).toHaveLength(1);
    expect(hints[0]).toContain('"My Drive/Elsewhere/Movies/"');
  });

  it("skips files Plex already has, passing the drive size to the library check", async () => {
    const asked: [string, number | undefined][] = [];
    h = await createDriveHarness({
      inLibrary: async (path, size) => {
        asked.push([path, size]);
        return path.endsWith("known.mkv");
      },
    });
    await h.monitor.pollOnce();
    const folder = h.google.drive.ensureFolders("Media/Movies");
    h.google.drive.addFile("known.mkv", folder, { size: 1234 });
    h.google.drive.addFile("new.mkv", folder, { size: 5678 });
    await h.monitor.pollOnce();
    expect(asked).toEqual([
      ["/data/Media/Movies/known.mkv", 1234],
      ["/data/Media/Movies/new.mkv", 5678],
    ]);
    expect(h.scanned()).toEqual(["/data/Media/Movies/new.mkv"]);
    expect(h.messages()).toContain("Rejected 1 file(s) from Google Drive changes for already being in Plex.");
  });

  it("costs no files.get per new file once the folders are cached", async () => {
    h = await createDriveHarness();
    await h.monitor.pollOnce();
    const season = h.google.drive.ensureFolders("Media/TV/Show/Season 1");
    h.google.drive.addFile("e1.mkv", season);
    await h.monitor.pollOnce();
    h.google.resetCalls();
    for (let i = 2; i <= 11; i++) h.google.drive.addFile(`e${i}.mkv`, season);
    await h.monitor.pollOnce();
    expect(h.scanned()).toHaveLength(11);
    expect(h.google.apiCalls()).toBe(1);
  });

  it("resolves unknown ancestors with files.get once, then from the cache (it survives a restart)", async () => {
    h = await createDriveHarness();
    const deep = h.google.drive.ensureFolders("Media/Movies/Deep (2000)");
    await h.monitor.pollOnce();
    h.google.drive.addFile("Deep (2000).mkv", deep);
    await h.monitor.pollOnce();
    expect(h.scanned()).toEqual(["/data/Media/Movies/Deep (2000)/Deep (2000).mkv"]);
    expect(h.google.calls["files.get"]).toBe(4); // root id at start-up, then Deep, Movies, Media

    const again = await h.restart();
    h = again;
    h.google.resetCalls();
    await h.monitor.pollOnce();
    h.google.drive.addFile("Deep (2000) sample.mkv", deep);
    await h.monitor.pollOnce();
    expect(h.scanned()).toEqual(["/data/Media/Movies/Deep (2000)/Deep (2000) sample.mkv"]);
    expect(h.google.calls["files.get"]).toBe(0);
  });

  it("reset_page_token starts from now; clear_drive_cache forgets the names", async () => {
    h = await createDriveHarness();
    await h.monitor.pollOnce();
    const folder = h.google.drive.ensureFolders("Media/Movies/C");
    h.google.drive.addFile("c1.mkv", folder);
    await h.monitor.pollOnce();
    h.google.drive.addFile("c2.mkv", folder);
    expect(await h.monitor.resetPageTokens()).toMatch(/reset/);
    await h.monitor.pollOnce(); // takes a fresh start token: c2 is history now
    await h.monitor.pollOnce();
    expect(h.scanned()).toEqual(["/data/Media/Movies/C/c1.mkv"]);

    expect(await h.monitor.clearCache()).toMatch(/cleared/);
    h.google.resetCalls();
    h.google.drive.addFile("c3.mkv", folder);
    await h.monitor.pollOnce();
    expect(h.scanned().at(-1)).toBe("/data/Media/Movies/C/c3.mkv");
    expect(h.google.calls["files.get"]).toBe(3);
  });
});
