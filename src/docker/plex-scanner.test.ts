// @module-tag process
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { installHostFakeScanner } from "../../test/support/docker/host-fake-scanner.ts";
import { createLibraryFixture } from "../../test/support/plex-library-db.ts";
import { ScannerNotFoundError } from "./errors.ts";
import { createHostRunner } from "../targets/plex/host-runner.ts";
import { createPlexScanner, parseSectionList, scanArgs } from "./plex-scanner.ts";
import type { ResolvedLayout, ScannerLayout } from "./presets.ts";
import { listScannerSections, matchSectionsByName } from "./scanner-sections.ts";

describe("parseSectionList", () => {
  it("reads `  N: Name` lines and ignores everything else", () => {
    const output = "Some banner\n  1: Movies\n  2: TV Shows\r\n 12: Kids: Cartoons \nnot a section: x\n";
    expect(parseSectionList(output)).toEqual([
      { id: "1", name: "Movies" },
      { id: "2", name: "TV Shows" },
      { id: "12", name: "Kids: Cartoons" },
    ]);
  });
});

describe("matchSectionsByName", () => {
  const sections = [
    { id: "1", title: "Movies" },
    { id: "2", title: "TV" },
    { id: "3", title: "4K Movies" },
  ];
  it("matches a section named like one path segment, case-insensitively", () => {
    expect(matchSectionsByName(sections, "/data/movies/Heat (1995)")).toEqual([sections[0]]);
    expect(matchSectionsByName(sections, "/mnt/TV/Show/Season 01")).toEqual([sections[1]]);
  });
  it("gives no answer rather than a guess between two", () => {
    expect(matchSectionsByName(sections, "/data/TV/Movies/x")).toEqual([]);
    expect(matchSectionsByName(sections, "/data/Films/x")).toEqual([]);
  });
});

describe("Plex scanner on this host (fake Plex Media Scanner and Plex SQLite)", () => {
  let dir: string;
  let layout: ScannerLayout;
  let state: string;
  const resolved = (): ResolvedLayout => ({ layout, preset: "none", reason: "test" });

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "autoscan-scanner-"));
    const installed = await installHostFakeScanner(join(dir, "usr lib plexmediaserver"));
    const scanner = installed.scanner;
    state = installed.state;
    const supportDir = join(dir, "Library", "Application Support");
    const databases = join(supportDir, "Plex Media Server", "Plug-in Support", "Databases");
    await mkdir(databases, { recursive: true });
    const library = createLibraryFixture(join(databases, "com.plexapp.plugins.library.db"));
    library.addSection({ name: "Movies", type: "movie", roots: ["/data/Movies"] });
    library.addSection({ name: "TV Shows", type: "show", roots: ["/data/TV", "/data2/TV"] });
    library.seal();
    library.close();
    layout = { scanner, user: "", supportDir, ldLibraryPath: "/usr/lib/plexmediaserver/lib" };
  });
  afterAll(async () => rm(dir, { recursive: true, force: true }));

  const make = () => createPlexScanner({ runner: createHostRunner({ useSudo: false }), layout: async () => resolved() });

  it("runs the classic scan with the layout's environment", async () => {
    const result = await make().run(scanArgs("2", "/data/TV/Show (2020)/Season 01"));
    expect(result.exitCode).toBe(0);
    const record = JSON.parse(result.stdout.split("\n")[0]?.replace("FAKE-SCANNER-RECORD ", "") ?? "{}");
    expect(record.argv).toEqual(["--scan", "--refresh", "--section", "2", "--directory", "/data/TV/Show (2020)/Season 01"]);
    expect(record.env).toMatchObject({
      LD_LIBRARY_PATH: "/usr/lib/plexmediaserver/lib",
      PLEX_MEDIA_SERVER_APPLICATION_SUPPORT_DIR: layout.supportDir,
    });
  });

  it("plans exactly what it runs (for --dry-run)", async () => {
    const plan = await make().plan(["--list"]);
    expect(plan.argv).toEqual([
      "/usr/bin/env",
      "LD_LIBRARY_PATH=/usr/lib/plexmediaserver/lib",
      `PLEX_MEDIA_SERVER_APPLICATION_SUPPORT_DIR=${layout.supportDir}`,
      layout.scanner,
      "--list",
    ]);
  });

  it("lists sections with --list, and their roots from the library database through Plex SQLite", async () => {
    const scanner = make();
    expect(await scanner.listSections()).toEqual([
      { id: "1", name: "Movies" },
      { id: "2", name: "TV Shows" },
    ]);
    expect(await scanner.sectionLocations()).toEqual([
      { id: "1", name: "Movies", path: "/data/Movies" },
      { id: "2", name: "TV Shows", path: "/data/TV" },
      { id: "2", name: "TV Shows", path: "/data2/TV" },
    ]);
    expect(await listScannerSections(scanner)).toEqual({
      source: "database",
      sections: [
        { id: "1", title: "Movies", type: "", locations: ["/data/Movies"], refreshing: false },
        { id: "2", title: "TV Shows", type: "", locations: ["/data/TV", "/data2/TV"], refreshing: false },
      ],
    });
  });

  it("falls back to --list names when the database cannot be read", async () => {
    const scanner = createPlexScanner({
      runner: createHostRunner({ useSudo: false }),
      layout: async () => ({ ...resolved(), layout: { ...layout, supportDir: join(dir, "elsewhere") } }),
    });
    expect(await scanner.sectionLocations()).toBeUndefined();
    const listed = await listScannerSections(scanner);
    expect(listed.source).toBe("list");
    expect(listed.sections.map((section) => [section.id, section.title, section.locations])).toEqual([
      ["1", "Movies", []],
      ["2", "TV Shows", []],
    ]);
  });

  it("finds running Plex Media Scanner processes by the binary's name", async () => {
    await writeFile(join(state, "control.json"), JSON.stringify({ sleepMs: 20_000 }));
    try {
      const scanner = make();
      const controller = new AbortController();
      let seen: string[] = [];
      // The fake prints its record first and then sleeps: once that line is out, the process is there.
      const run = scanner.run(["--list"], {
        signal: controller.signal,
        onLine: () =>
          void scanner.runningScanners().then((found) => {
            seen = found.map((process) => process.command);
            controller.abort();
          }),
      });
      await expect(run).rejects.toThrow(/shutting down/);
      expect(seen).toHaveLength(1);
      expect(seen[0]).toContain(`${layout.scanner} --list`);
    } finally {
      await rm(join(state, "control.json"), { force: true });
    }
  });

  it("says which path and preset it tried when the binary cannot be run (127)", async () => {
    const scanner = createPlexScanner({
      runner: createHostRunner({ useSudo: false }),
      layout: async () => ({
        layout: { ...layout, scanner: "/nowhere/Plex Media Scanner" },
        preset: "hotio",
        reason: "auto: image ghcr.io/hotio/plex",
      }),
    });
    const error = await scanner.run(["--list"]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ScannerNotFoundError);
    expect((error as Error).message).toMatch(
      /^Could not run "\/nowhere\/Plex Media Scanner" \(this host, exit 127: .*(ENOENT|No such file).*\)\. Tried the path from preset hotio \(auto: image ghcr\.io\/hotio\/plex\)/,
    );
  });
});
