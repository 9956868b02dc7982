import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeTempDir } from "../../test/support/capture-log.ts";
import { encodeListing, filesOf, type Listing } from "./listing.ts";
import { loadTreeState, saveTreeState } from "./tree-state.ts";

let dir: string;
let cleanup: () => Promise<void>;
let stateFile: string;

beforeEach(async () => {
  ({ dir, cleanup } = await makeTempDir("autoscan-tree-state-"));
  // Under a folder that does not exist yet, as <data dir>/watch/<name>.state at a first start.
  stateFile = join(dir, "watch", "tv.state");
});
afterEach(() => cleanup());

const PATHS = ["/mnt/media/TV", "/mnt/media/Anime"];
const file = (name: string, size = 1, mtimeMs = 1_700_000_000_000) => ({ name, size, mtimeMs });

function tree(): Map<string, Listing> {
  return new Map([
    ["/mnt/media/TV", encodeListing({ folders: ["Show", "Amélie – 東京"], files: [] })],
    ["/mnt/media/TV/Show", encodeListing({ folders: ["Season 01"], files: [file("tvshow.nfo", 12)] })],
    [
      "/mnt/media/TV/Show/Season 01",
      encodeListing({
        folders: [],
        files: [file("Show - S01E01.mkv", 1_234_567_890, 1_767_225_600_123), file("Show's \"E02\" [1080p] {x}.mkv", 2), file("carriage\rreturn.srt", 3)],
      }),
    ],
    ["/mnt/media/TV/Amélie – 東京", ""],
    ["/mnt/media/Anime", encodeListing({ folders: [], files: [file("back\\slash.mkv", 4)] })],
  ]);
}

describe("the watcher's state on disk", () => {
  it("a missing file is nothing known (a first start)", async () => {
    const state = await loadTreeState(stateFile, PATHS);
    expect(state.known).toBe(false);
    expect(state.dirs.size).toBe(0);
  });

  it("round-trips every folder's listing, odd names and empty folders included", async () => {
    const dirs = tree();
    await saveTreeState(stateFile, PATHS, dirs);
    const state = await loadTreeState(stateFile, PATHS);
    expect(state.known).toBe(true);
    expect(state.dirs).toEqual(dirs);
    expect(filesOf(state.dirs.get("/mnt/media/TV/Show/Season 01") ?? "")).toContainEqual(file("Show - S01E01.mkv", 1_234_567_890, 1_767_225_600_123));
  });

  it("an empty tree (PATHS with nothing in them yet) is still something known", async () => {
    await saveTreeState(stateFile, PATHS, new Map([["/mnt/media/TV", ""], ["/mnt/media/Anime", ""]]));
    const state = await loadTreeState(stateFile, PATHS);
    expect(state.known).toBe(true);
    expect(state.dirs).toEqual(new Map([["/mnt/media/TV", ""], ["/mnt/media/Anime", ""]]));
  });

  it("the same PATHS in another order are the same watcher", async () => {
    await saveTreeState(stateFile, PATHS, tree());
    const state = await loadTreeState(stateFile, [...PATHS].reverse());
    expect(state.known).toBe(true);
    expect(state.dirs).toEqual(tree());
  });

  it("a save replaces the last one (a folder gone is gone from the file)", async () => {
    await saveTreeState(stateFile, PATHS, tree());
    const smaller = tree();
    smaller.delete("/mnt/media/TV/Amélie – 東京");
    await saveTreeState(stateFile, PATHS, smaller);
    expect((await loadTreeState(stateFile, PATHS)).dirs).toEqual(smaller);
  });

  it.each([
    ["a path removed", ["/mnt/media/TV"]],
    ["a path added", [...PATHS, "/mnt/media/Kids"]],
    ["a path changed", ["/mnt/media/TV", "/mnt/media/Anime2"]],
  ])("written for other PATHS (%s): nothing known", async (_, paths) => {
    await saveTreeState(stateFile, PATHS, tree());
    const state = await loadTreeState(stateFile, paths);
    expect(state.known).toBe(false);
    expect(state.dirs.size).toBe(0);
  });

  it.each([
    ["empty", () => ""],
    ["binary garbage", () => "\u0000\u00ff\u0013garbage\u0000\n\u0001\t\t"],
    ["another version's header", (text: string) => text.replace("autoscan-watch 1", "autoscan-watch 2")],
    ["a header without its PATHS", (text: string) => text.replace(/\t.*\n/, "\n")],
    ["cut short in the middle of a line", (text: string) => text.slice(0, Math.floor(text.length * 0.6))],
    ["cut short right after the header's tab", (text: string) => text.slice(0, text.indexOf("\t") + 1)],
  ])("a damaged file (%s): nothing known", async (_, damage) => {
    await saveTreeState(stateFile, PATHS, tree());
    const text = await readFile(stateFile, "utf8");
    const damaged = damage(text);
    expect(damaged).not.toBe(text);
    await writeFile(stateFile, damaged);
    const state = await loadTreeState(stateFile, PATHS);
    expect(state.known).toBe(false);
    expect(state.dirs.size).toBe(0);
  });

  it("a line for a folder outside PATHS (the file edited by hand, or mixed up): nothing known", async () => {
    await saveTreeState(stateFile, PATHS, tree());
    await writeFile(stateFile, `${await readFile(stateFile, "utf8")}/mnt/media/Movies\t\n`);
    expect((await loadTreeState(stateFile, PATHS)).known).toBe(false);
  });

  it("PATHS [\"/\"]: every folder lies under it", async () => {
    const dirs = new Map([["/", encodeListing({ folders: ["media"], files: [] })], ["/media", encodeListing({ folders: [], files: [file("a.mkv")] })]]);
    await saveTreeState(stateFile, ["/"], dirs);
    expect(await loadTreeState(stateFile, ["/"])).toEqual({ dirs, known: true });
  });

  it("a state file that is a folder (unreadable): nothing known", async () => {
    const state = await loadTreeState(dir, PATHS);
    expect(state.known).toBe(false);
  });
});
