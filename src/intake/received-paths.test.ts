import { describe, expect, it } from "vitest";
import { hasParentSegment, joinPath, parentOf } from "./received-paths.ts";

describe("parentOf", () => {
  it.each([
    ["/tv/Show/Season 1/x.mkv", "/tv/Show/Season 1"],
    ["/tv/Show/Season 1/", "/tv/Show"],
    ["/x.mkv", "/"],
    ["C:\\Media\\TV\\x.mkv", "C:\\Media\\TV"],
    ["C:\\x.mkv", "C:\\"],
    ["\\\\nas\\media\\TV\\Show\\x.mkv", "\\\\nas\\media\\TV\\Show"],
    ["My Drive/Media/x.mkv", "My Drive/Media"],
  ])("%s → %s", (path, parent) => {
    expect(parentOf(path)).toBe(parent);
  });
});

describe("joinPath", () => {
  it.each([
    ["/tv/Show", "Season 1/x.mkv", "/tv/Show/Season 1/x.mkv"],
    ["/tv/Show/", "/Season 1/x.mkv", "/tv/Show/Season 1/x.mkv"],
    ["C:\\Media\\TV\\Show", "Season 01\\x.mkv", "C:\\Media\\TV\\Show\\Season 01\\x.mkv"],
    ["\\\\nas\\media\\Show\\", "x.mkv", "\\\\nas\\media\\Show\\x.mkv"],
  ])("%s + %s", (folder, relative, joined) => {
    expect(joinPath(folder, relative)).toBe(joined);
  });
});

describe("hasParentSegment", () => {
  it("finds '..' with either separator, and only as a whole segment", () => {
    expect(hasParentSegment("/tv/../etc")).toBe(true);
    expect(hasParentSegment("C:\\tv\\..\\x")).toBe(true);
    expect(hasParentSegment("..")).toBe(true);
    expect(hasParentSegment("/tv/Show.../x..mkv")).toBe(false);
  });
});
