import { describe, expect, it } from "vitest";
import { matchLibraryFolders } from "./library-folders.ts";

const folders = [
  { library: "Movies", path: "/data/Movies" },
  { library: "4K", path: "/data/Movies4K/" },
  { library: "Kids", path: "/data/Movies/Kids" },
  { library: "Windows", path: "D:\\Media\\TV" },
  { library: "Empty", path: "" },
];

describe("matchLibraryFolders", () => {
  it.each([
    ["/data/Movies/Heat (1995)", ["Movies"]],
    ["/data/Movies", ["Movies"]],
    ["/data/Movies/", ["Movies"]],
    ["/data/Movies4K/Heat (1995)", ["4K"]],
    ["/data/Movies/Kids/Up (2009)", ["Kids", "Movies"]],
    ["/data/Movie", []],
    ["d:/media/tv/Show", ["Windows"]],
    ["/elsewhere", []],
  ])("%s → %j", (folder, expected) => {
    expect(matchLibraryFolders(folders, folder).map((f) => f.library)).toEqual(expected);
  });

  it("compares names in NFC, whatever form each side spells them in", () => {
    const library = [{ library: "Ciné", path: "/data/Cin\u00e9" }];
    expect(matchLibraryFolders(library, "/data/Cine\u0301/Heat (1995)")).toHaveLength(1);
    expect(matchLibraryFolders([{ library: "Ciné", path: "/data/Cine\u0301" }], "/data/Cin\u00e9/x")).toHaveLength(1);
  });
});
