import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createLogger } from "../src/logging/create-logger.ts";
import { createLibraryDb, type LibraryDb } from "../src/targets/plex/library-db.ts";
import { createLibraryFixture, type LibraryFixture } from "./support/plex-library-db.ts";

const log = pino({ level: "silent" });
let dir: string;
let fixture: LibraryFixture;
let library: LibraryDb | undefined;
let ids: { movies: string; tv: string; heat: string; season1: string; episodes: string[] };

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "plex-db-"));
  fixture = createLibraryFixture(join(dir, "com.plexapp.plugins.library.db"));
  const movies = fixture.addSection({ name: "Movies", type: "movie", roots: ["/data/Movies"] });
  const tv = fixture.addSection({ name: "TV", type: "show", roots: ["/data/TV"] });
  const heat = fixture.addMovie({ sectionId: movies, title: "Heat", file: "/data/Movies/Heat (1995)/Heat.mkv", size: 1000 });
  fixture.addMovie({ sectionId: movies, title: "Gone", file: "/data/Movies/Gone (2001)/Gone.mkv", size: 5, deleted: true });
  const episodes = [1, 2].map((episode) =>
    fixture.addEpisode({
      sectionId: tv,
      show: "Dark",
      season: 1,
      episode,
      file: `/data/TV/Dark/Season 01/Dark - S01E0${episode}.mkv`,
      size: 2000 + episode,
    }),
  );
  fixture.seal();
  ids = {
    movies,
    tv,
    heat: heat.itemId,
    season1: episodes[0]?.seasonId ?? "",
    episodes: episodes.map((e) => e.itemId),
  };
});

afterEach(() => {
  library?.close();
  library = undefined;
  fixture.close();
  rmSync(dir, { recursive: true, force: true });
});

function localFile(name: string, size: number): string {
  const path = join(dir, name);
  writeFileSync(path, Buffer.alloc(size));
  return path;
}

describe("library database: is this file already in Plex?", () => {
  it("answers yes only when the part is live and the local size matches", async () => {
    library = createLibraryDb({ path: fixture.path, log });
    const heat = "/data/Movies/Heat (1995)/Heat.mkv";
    expect(await library.isInLibrary(heat, localFile("same.mkv", 1000))).toBe(true);
    expect(await library.isInLibrary(heat, localFile("bigger.mkv", 1001))).toBe(false);
    expect(await library.isInLibrary(heat, join(dir, "missing.mkv"))).toBe(false);
    expect(await library.isInLibrary(heat)).toBe(false);
    expect(await library.isInLibrary("/data/Movies/Gone (2001)/Gone.mkv", localFile("gone.mkv", 5))).toBe(false);
    expect(await library.isInLibrary("/data/Movies/Other.mkv", localFile("other.mkv", 1000))).toBe(false);
    expect(await library.isInLibrary("/data/movies/heat (1995)/heat.mkv", localFile("case.mkv", 1000))).toBe(false);
  });

  it("takes a database hit alone when the size check is disabled", async () => {
    library = createLibraryDb({ path: fixture.path, log, disableSizeCheck: true });
    expect(await library.isInLibrary("/data/Movies/Heat (1995)/Heat.mkv")).toBe(true);
    expect(await library.isInLibrary("/data/Movies/Gone (2001)/Gone.mkv")).toBe(false);
  });

  it("sees rows Plex has written to the -wal file and not yet checkpointed", async () => {
    library = createLibraryDb({ path: fixture.path, log, disableSizeCheck: true });
    const file = "/data/Movies/Heat (1995)/Heat - 4K.mkv";
    expect(await library.isInLibrary(file)).toBe(false);
    const mediaItemId = String(
      (fixture.writer.prepare("SELECT id FROM media_items LIMIT 1").get() as { id: number }).id,
    );
    fixture.addPart({ mediaItemId, file, size: 9 });
    expect(statSync(`${fixture.path}-wal`).size).toBeGreaterThan(0);
    expect(await library.isInLibrary(file)).toBe(true);
  });

  it("never writes to the database", async () => {
    const digest = (path: string): string => createHash("sha256").update(readFileSync(path)).digest("hex");
    fixture.addPart({ mediaItemId: "1", file: "/data/Movies/Heat (1995)/Heat.srt.mkv", size: 1 }); // Plex is writing
    const before = [digest(fixture.path), digest(`${fixture.path}-wal`)];
    library = createLibraryDb({ path: fixture.path, log });
    await library.isInLibrary("/data/Movies/Heat (1995)/Heat.mkv", localFile("x.mkv", 1000));
    await library.findItems(["/data/TV/Dark/Season 01/Dark - S01E01.mkv"]);
    await library.countDeleted(ids.movies);
    library.close();
    library = undefined;
    expect([digest(fixture.path), digest(`${fixture.path}-wal`)]).toEqual(before);
  });

  it("reads despite Plex's collating tokenizer and icu_root collation, which break writes outside Plex", async () => {
    const plain = new DatabaseSync(fixture.path);
    try {
      expect(() => plain.prepare("SELECT count(*) FROM fts4_metadata_titles_icu").get()).toThrow(
        /unknown tokenizer: collating/,
      );
      expect(() => plain.exec("UPDATE metadata_items SET title = 'x' WHERE id = 1")).toThrow(/icu_root|collating/);
    } finally {
      plain.close();
    }
    library = createLibraryDb({ path: fixture.path, log, disableSizeCheck: true });
    expect(await library.isInLibrary("/data/Movies/Heat (1995)/Heat.mkv")).toBe(true);
    expect(await library.findItems(["/data/Movies/Heat (1995)/Heat.mkv"])).toHaveLength(1);
  });
});

describe("library database: items and trash", () => {
  it("finds items with their parent (season) and the parent's children", async () => {
    library = createLibraryDb({ path: fixture.path, log });
    const found = await library.findItems([
      "/data/TV/Dark/Season 01/Dark - S01E02.mkv",
      "/data/Movies/Heat (1995)/Heat.mkv",
      "/data/Movies/Gone (2001)/Gone.mkv",
      "/data/TV/Dark/Season 01/Dark - S01E02.mkv",
    ]);
    expect(found).toEqual([
      { id: ids.episodes[1], parentId: ids.season1, sectionId: ids.tv, file: "/data/TV/Dark/Season 01/Dark - S01E02.mkv" },
      { id: ids.heat, sectionId: ids.movies, file: "/data/Movies/Heat (1995)/Heat.mkv" },
    ]);
    expect(await library.childrenOf(ids.season1)).toEqual(ids.episodes);
  });

  it("counts a section's deleted items and parts", async () => {
    library = createLibraryDb({ path: fixture.path, log });
    expect(await library.countDeleted(ids.movies)).toBe(2);
    expect(await library.countDeleted(ids.tv)).toBe(0);
  });
});

describe("library database: unavailable", () => {
  it("answers 'not in Plex' while the file is missing, warns once, and opens it once it appears", async () => {
    const lines: string[] = [];
    const handle = createLogger({ level: "debug", format: "json", stream: { write: (line) => lines.push(line) } });
    const path = join(dir, "later.db");
    library = createLibraryDb({ path, log: handle.log, disableSizeCheck: true });
    expect(await library.isInLibrary("/data/Movies/Heat (1995)/Heat.mkv")).toBe(false);
    expect(await library.isInLibrary("/data/Movies/Heat (1995)/Heat.mkv")).toBe(false);
    expect(lines.filter((line) => line.includes("Cannot read the Plex library database"))).toHaveLength(1);

    fixture.close(); // the last connection checkpoints the -wal into the main file
    writeFileSync(path, readFileSync(fixture.path));
    fixture = createLibraryFixture(join(dir, "unused.db"));
    expect(await library.isInLibrary("/data/Movies/Heat (1995)/Heat.mkv")).toBe(true);
  });

  it("says clearly when the file is not a Plex database", async () => {
    const path = join(dir, "other.db");
    const other = new DatabaseSync(path);
    other.exec("CREATE TABLE t (x)");
    other.close();
    library = createLibraryDb({ path, log });
    await expect(library.countDeleted("1")).rejects.toThrow(/is not a Plex library database/);
    expect(() => library?.open()).toThrow(/is not a Plex library database/);
  });
});
