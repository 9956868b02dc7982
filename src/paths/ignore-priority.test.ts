import { describe, expect, it } from "vitest";
import { findIgnoreMatch } from "./ignore.ts";
import { resolvePriority } from "./priority.ts";
import { normalizePath, parentFolder, withoutTrailingSlash } from "./normalize.ts";

describe("SERVER_IGNORE_LIST (case-insensitive substring, plex_autoscan semantics)", () => {
  const list = ["/.grab/", ".DS_Store", "Thumbs.db"];
  it.each([
    ["/data/Movies/.grab/x.mkv", "/.grab/"],
    ["/data/Movies/X/.ds_store", ".DS_Store"],
    ["/data/Movies/X/THUMBS.DB", "Thumbs.db"],
    ["/data/Movies/X/x.mkv", undefined],
  ])("%s → %s", (path, expected) => {
    expect(findIgnoreMatch(path, list)).toBe(expected);
  });
  it("ignores empty entries", () => {
    expect(findIgnoreMatch("/data/x", [""])).toBeUndefined();
  });
});

describe("SERVER_SCAN_PRIORITIES (first matching entry, case-insensitive substring, unmatched = 0)", () => {
  const priorities = { "0": ["/Movies/"], "1": ["/TV/"], "2": ["/Music/"] };
  it.each([
    ["/data/Movies/X", 0],
    ["/data/tv/Show/Season 1", 1],
    ["/data/Music/Artist", 2],
    ["/data/Books/X", 0],
  ])("%s → %d", (folder, expected) => {
    expect(resolvePriority(folder, priorities)).toBe(expected);
  });
  it("accepts negative priorities", () => {
    expect(resolvePriority("/data/Urgent/x", { "-1": ["/Urgent/"] })).toBe(-1);
  });
});

describe("normalize", () => {
  it.each([
    ["/a/b/c.mkv", "/a/b"],
    ["/a/b/", "/a"],
    ["/a", "/"],
    ["/", "/"],
  ])("parentFolder(%s) = %s", (path, expected) => expect(parentFolder(path)).toBe(expected));
  it("keeps a UNC share's leading double slash", () => expect(normalizePath("\\\\nas\\x\\y")).toBe("//nas/x/y"));
  it("drops a trailing slash but keeps the root", () => {
    expect(withoutTrailingSlash("/a/b/")).toBe("/a/b");
    expect(withoutTrailingSlash("/")).toBe("/");
  });
});
