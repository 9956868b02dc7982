// @module-tag process
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { afterAll, describe, expect, it } from "vitest";
import { matchSections, type PlexSection } from "../targets/plex/sections.ts";
import { createDiskProbe } from "./disk-probe.ts";
import { createPathMapper, type PathMappings } from "./mapping.ts";
import { createPathPreview, type PathPreviewOptions } from "./preview.ts";

/** The preview against real folders on disk and a Plex section list (no Plex needed). */
const root = mkdtempSync(join(tmpdir(), "autoscan-preview-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
mkdirSync(join(root, "Movies", "Heat (1995)"), { recursive: true });
writeFileSync(join(root, "Movies", "Heat (1995)", "Heat (1995).mkv"), "");
mkdirSync(join(root, "Movies", "Am\u0065\u0301lie (2001)"), { recursive: true }); // NFD, as a Mac writes it

const SECTIONS: PlexSection[] = [
  { id: "1", title: "Movies", type: "movie", locations: ["/data/Movies"], refreshing: false },
  { id: "2", title: "TV", type: "show", locations: ["/data/TV", "/data2/TV"], refreshing: false },
];
const MAPPINGS: PathMappings = {
  "/data/Movies/": [`${root}/Movies/`, "My Drive/Media/Movies/"],
  "/data/Other/": [`${root}/Other/`],
  "C:\\Plex\\Music\\": [],
};
const probe = createDiskProbe({ log: pino({ level: "silent" }), mountInfoFile: join(root, "no-mountinfo") });

function preview(overrides: Partial<PathPreviewOptions> = {}, mappings: PathMappings = MAPPINGS) {
  return createPathPreview({
    mapper: createPathMapper({ mappings }),
    hasMappings: () => Object.keys(mappings).length > 0,
    sectionsHolding: async (folder) => matchSections(SECTIONS, folder),
    stat: probe.stat,
    ...overrides,
  });
}

describe("createPathPreview", () => {
  it("follows a mapped file to its server path, library and folder", async () => {
    const input = `  ${root}/Movies/Heat (1995)/Heat (1995).mkv `;
    expect(await preview()(input)).toEqual({
      input: input.trim(),
      matchedForm: `${root}/Movies/`,
      mapped: true,
      serverPath: "/data/Movies/Heat (1995)/Heat (1995).mkv",
      sections: [{ id: "1", title: "Movies" }],
      onDisk: "file",
      localPath: `${root}/Movies/Heat (1995)/Heat (1995).mkv`,
      lookedAt: ["/data/Movies/Heat (1995)/Heat (1995).mkv", `${root}/Movies/Heat (1995)/Heat (1995).mkv`],
      scanFolder: "/data/Movies/Heat (1995)",
      problems: [],
    });
  });

  it("scans a folder itself, and a path already in the server's form needs no form", async () => {
    const result = await preview()("/data/Movies/Heat (1995)");
    expect(result).toMatchObject({ mapped: true, onDisk: "folder", scanFolder: "/data/Movies/Heat (1995)", problems: [] });
    expect(result.matchedForm).toBeUndefined();
    expect(result.localPath).toBe(`${root}/Movies/Heat (1995)`);
  });

  it("shows a missing file without calling it a problem, scanned as given as the queue does", async () => {
    const result = await preview()("My Drive/Media/Movies/Heat (1995)/Heat.2.mkv");
    expect(result).toMatchObject({
      matchedForm: "My Drive/Media/Movies/",
      serverPath: "/data/Movies/Heat (1995)/Heat.2.mkv",
      onDisk: "missing",
      localPath: "/data/Movies/Heat (1995)/Heat.2.mkv",
      lookedAt: ["/data/Movies/Heat (1995)/Heat.2.mkv", `${root}/Movies/Heat (1995)/Heat.2.mkv`],
      scanFolder: "/data/Movies/Heat (1995)/Heat.2.mkv",
      sections: [{ id: "1", title: "Movies" }],
      problems: [],
    });
    // A trailing slash says "folder", as it does to the queue.
    expect(await preview()("/data/Movies/New (2026)/")).toMatchObject({ onDisk: "missing", scanFolder: "/data/Movies/New (2026)" });
  });

  it("finds a name written in the other Unicode spelling and scans it as spelled on disk", async () => {
    const result = await preview()("/data/Movies/Am\u00e9lie (2001)");
    expect(result.onDisk).toBe("folder");
    expect(result.scanFolder).toBe("/data/Movies/Am\u0065\u0301lie (2001)");
  });

  it("holds a path that matches no mapping and lies in no library, naming the key and the command", async () => {
    const result = await preview()("/nowhere/foo.mkv");
    expect(result).toMatchObject({ mapped: false, serverPath: "/nowhere/foo.mkv", sections: [], onDisk: "missing" });
    expect(result.problems).toHaveLength(1);
    expect(result.problems[0]?.reason).toContain("No SERVER_PATH_MAPPINGS form matches this path");
    expect(result.problems[0]?.fix).toContain("`SERVER_PATH_MAPPINGS`");
    expect(result.problems[0]?.fix).toContain("`autoscan sections`");
  });

  it("holds a mapped path that no library holds", async () => {
    const result = await preview()(`${root}/Other/x.mkv`);
    expect(result).toMatchObject({ mapped: true, serverPath: "/data/Other/x.mkv", sections: [] });
    expect(result.problems.map((p) => p.reason)).toEqual(["No Plex library holds '/data/Other/x.mkv': Plex would not scan it."]);
    expect(result.problems[0]?.fix).toContain("`autoscan sections`");
  });

  it("says why the libraries are unknown; an unmatched path is a problem only while mappings exist", async () => {
    const down = { sectionsHolding: async () => Promise.reject(new Error("Plex is unreachable at http://plex:32400")) };
    const unmatched = await preview(down)("/nowhere/foo.mkv");
    expect(unmatched.sections).toBeUndefined();
    expect(unmatched.sectionsError).toBe("Plex is unreachable at http://plex:32400");
    expect(unmatched.problems[0]?.reason).toContain("Plex could not be asked");
    expect((await preview(down)("/data/Movies/Heat (1995)")).problems).toEqual([]);
    expect((await preview(down, {})("/nowhere/foo.mkv")).problems).toEqual([]);
    const none = await preview({ sectionsHolding: undefined })("/data/Movies/Heat (1995)");
    expect(none.sectionsError).toContain("Plex is not set up");
  });

  it("refuses a relative path or one with '..', without looking at the disk", async () => {
    const looked: string[] = [];
    const stat = async (path: string) => (looked.push(path), "missing" as const);
    const relative = await preview({ stat })("Movies/Heat");
    expect(relative).toMatchObject({ onDisk: "not checkable", sections: [] });
    expect(relative.problems[0]?.reason).toContain("not absolute");
    const dotted = await preview({ stat })("/data/Movies/../../etc/passwd");
    expect(dotted.problems[0]?.reason).toContain("'..'");
    expect(looked).toEqual([]);
  });

  it("says 'not checkable' when the disk does not answer, in time or at all, or the form is not a local one", async () => {
    expect((await preview({ stat: async () => "unanswered" })("/data/Movies/Heat (1995)")).onDisk).toBe("not checkable");
    const hung = preview({ stat: () => new Promise(() => undefined), timeoutMs: 20 });
    expect((await hung("/data/Movies/Heat (1995)")).onDisk).toBe("not checkable");
    const windows = await preview()("C:\\Plex\\Music\\Album");
    expect(windows).toMatchObject({ serverPath: "C:/Plex/Music/Album", onDisk: "not checkable" });
    expect(windows.localPath).toBeUndefined();
  });
});
