import { describe, expect, it } from "vitest";
import { resolveWorkUnit } from "./work-unit.ts";

describe("resolveWorkUnit", () => {
  it.each([
    ["file", "/tv/Show/Season 01/Show - S01E01.mkv", "/tv/Show/Season 01", "file"],
    ["folder", "/tv/Show/Season 01/", "/tv/Show/Season 01", "folder"],
    ["folder", "/tv/Show/Season 01", "/tv/Show/Season 01", "folder"],
    ["unknown", "/movies/Film (2020)/Film (2020).mkv", "/movies/Film (2020)", "file"],
    ["unknown", "/movies/Film (2020)/Film.en.srt", "/movies/Film (2020)", "file"],
    ["unknown", "/movies/Film (2020)", "/movies/Film (2020)", "folder"],
    ["unknown", "/movies/Film (2020)/", "/movies/Film (2020)", "folder"],
    ["unknown", "/tv/Show.Name.S01", "/tv", "file"],
    ["unknown", "/tv/Show/.plexignore", "/tv/Show/.plexignore", "folder"],
    ["unknown", "/music/Artist/Album.Deluxe.Edition", "/music/Artist/Album.Deluxe.Edition", "folder"],
    ["file", "/movie.mkv", "/", "file"],
    ["folder", "/", "/", "folder"],
  ] as const)("%s %s → folder %s (%s)", (kind, path, folder, treatedAs) => {
    const unit = resolveWorkUnit({ kind, path });
    expect(unit.folder).toBe(folder);
    expect(unit.treatedAs).toBe(treatedAs);
  });

  it("normalises the path to NFC and folds repeated slashes", () => {
    const unit = resolveWorkUnit({ kind: "file", path: "/tv//Pokémon/S01E01.mkv".normalize("NFD") });
    expect(unit.folder).toBe("/tv/Pokémon".normalize("NFC"));
  });
});
