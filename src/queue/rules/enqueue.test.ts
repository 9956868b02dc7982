import { describe, expect, it } from "vitest";
import { requestFolder } from "./enqueue.ts";

describe("requestFolder", () => {
  it.each([
    ["file", "/tv/Show/Season 01/Show - S01E01.mkv", "/tv/Show/Season 01", "file"],
    ["folder", "/tv/Show/Season 01/", "/tv/Show/Season 01", "folder"],
    ["folder", "/tv/Show/Season 01", "/tv/Show/Season 01", "folder"],
    ["folder", "/movies/The.Matrix.1999.1080p", "/movies/The.Matrix.1999.1080p", "folder"],
    ["file", "/movie.mkv", "/", "file"],
    ["folder", "/", "/", "folder"],
  ] as const)("%s %s → folder %s (%s)", (kind, path, folder, treatedAs) => {
    const unit = requestFolder({ kind, path });
    expect(unit.folder).toBe(folder);
    expect(unit.treatedAs).toBe(treatedAs);
  });

  // The disk decides (resolve-kind.ts, then the file check); a name is no evidence, so nothing is widened by it.
  it.each([
    "/movies/The.Matrix.1999.1080p",
    "/tv/Show.Name.S01",
    "/tv/Show.S01",
    "/music/Artist/Album.Deluxe.Edition",
    "/movies/Film (2020)/Film (2020).mkv",
    "/movies/Film (2020)/Film.en.srt",
    "/tv/Show/.plexignore",
    "/movies/Film (2020)",
  ])("an unknown path is scanned as given, never its parent: %s", (path) => {
    const unit = requestFolder({ kind: "unknown", path });
    expect(unit.folder).toBe(path);
    expect(unit.treatedAs).toBe("folder");
  });

  it("drops a trailing slash of an unknown path", () => {
    expect(requestFolder({ kind: "unknown", path: "/movies/Film (2020)/" }).folder).toBe("/movies/Film (2020)");
  });

  it("keys the folder in NFC so two spellings merge, and keeps the received bytes of the path and folder", () => {
    const nfd = "/tv//Poke\u0301mon/S01E01.mkv";
    const unit = requestFolder({ kind: "file", path: nfd });
    expect(unit.folder).toBe("/tv/Pok\u00e9mon");
    expect(unit.receivedFolder).toBe("/tv/Poke\u0301mon");
    expect(unit.path).toBe("/tv/Poke\u0301mon/S01E01.mkv");
    expect(requestFolder({ kind: "file", path: "/tv/Pok\u00e9mon/S01E02.mkv" }).folder).toBe(unit.folder);
  });
});
