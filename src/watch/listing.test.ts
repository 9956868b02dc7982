import { describe, expect, it } from "vitest";
import { diffListings, diffListingsInSlices, encodeListing, encodeListingInSlices, fileCountOf, filesOf, foldersOf } from "./listing.ts";

const file = (name: string, size = 1, mtimeMs = 1_700_000_000_000) => ({ name, size, mtimeMs });

describe("a folder's listing as one string", () => {
  it("is the same string for the same folder, whatever order the disk lists it in", () => {
    const a = encodeListing({ folders: ["Season 02", "Season 01"], files: [file("b.mkv"), file("a.mkv", 2)] });
    const b = encodeListing({ folders: ["Season 01", "Season 02"], files: [file("a.mkv", 2), file("b.mkv")] });
    expect(a).toBe(b);
    expect(foldersOf(a)).toEqual(["Season 01", "Season 02"]);
    expect(filesOf(a)).toEqual([file("a.mkv", 2), file("b.mkv")]);
    expect(fileCountOf(a)).toBe(2);
  });

  it("an empty folder is the empty string, with nothing in it", () => {
    const empty = encodeListing({ folders: [], files: [] });
    expect(empty).toBe("");
    expect(foldersOf(empty)).toEqual([]);
    expect(filesOf(empty)).toEqual([]);
    expect(fileCountOf(empty)).toBe(0);
  });

  it("round-trips names with odd characters: spaces, quotes, a slash-like and a trailing-slash-like name, unicode, backslashes, a carriage return", () => {
    const names = [
      "Show's \"Best\" Of (2020) [1080p] {imdb-tt123}.mkv",
      "Amélie – 東京 🎬.mkv",
      "back\\slash.mkv",
      "ends with space .mkv",
      " leading.mkv",
      "carriage\rreturn.mkv",
      "percent %20 and & ; $HOME.mkv",
      "#hash?.mkv",
      "a.b.c..mkv",
      "no-extension",
      "9.mkv",
    ];
    const folders = ["Ünïcödé Season", "Season 01 ", "dir with \\ backslash", "a.b"];
    const listing = encodeListing({ folders, files: names.map((name, i) => file(name, i, 1_000 + i)) });
    expect(foldersOf(listing).sort()).toEqual([...folders].sort());
    expect(filesOf(listing).sort((x, y) => x.size - y.size)).toEqual(names.map((name, i) => file(name, i, 1_000 + i)));
    expect(fileCountOf(listing)).toBe(names.length);
  });

  it("a file and a folder of the same name stay apart", () => {
    const listing = encodeListing({ folders: ["Extras"], files: [file("Extras")] });
    expect(foldersOf(listing)).toEqual(["Extras"]);
    expect(filesOf(listing)).toEqual([file("Extras")]);
  });

  it("leaves out names with a line break, a tab or \\u0001 (the separators), and keeps the rest of the folder", () => {
    const listing = encodeListing({
      folders: ["bad\nfolder", "good"],
      files: [file("line\nbreak.mkv"), file("tab\there.mkv"), file("ctrl\u0001a.mkv"), file("fine.mkv")],
    });
    expect(foldersOf(listing)).toEqual(["good"]);
    expect(filesOf(listing)).toEqual([file("fine.mkv")]);
    expect(fileCountOf(listing)).toBe(1);
    expect(listing).not.toMatch(/[\t\n]/);
  });

  it("keeps large sizes and mtimes exactly", () => {
    const big = file("big.mkv", 123_456_789_012, 1_767_225_600_123);
    expect(filesOf(encodeListing({ folders: [], files: [big] }))).toEqual([big]);
  });
});

describe("diffListings", () => {
  const before = encodeListing({
    folders: ["Season 01", "Season 02"],
    files: [file("same.mkv"), file("grows.mkv", 10), file("touched.mkv", 5, 1), file("gone.mkv")],
  });

  it("nothing changed: nothing to say", () => {
    expect(diffListings(before, before)).toEqual({ changed: [], created: new Set(), removed: [], newFolders: [], goneFolders: [] });
  });

  it("new files, a changed size, a changed mtime, a gone file, a new and a gone folder", () => {
    const after = encodeListing({
      folders: ["Season 01", "Season 03"],
      files: [file("same.mkv"), file("grows.mkv", 20), file("touched.mkv", 5, 2), file("new 'one'.mkv")],
    });
    const diff = diffListings(before, after);
    expect(diff.changed.map((f) => f.name).sort()).toEqual(["grows.mkv", "new 'one'.mkv", "touched.mkv"]);
    expect(diff.changed.find((f) => f.name === "grows.mkv")).toEqual(file("grows.mkv", 20));
    expect([...diff.created]).toEqual(["new 'one'.mkv"]);
    expect(diff.removed).toEqual(["gone.mkv"]);
    expect(diff.newFolders).toEqual(["Season 03"]);
    expect(diff.goneFolders).toEqual(["Season 02"]);
  });

  it("nothing known before: everything is new", () => {
    const diff = diffListings(undefined, before);
    expect(diff.changed.map((f) => f.name).sort()).toEqual(["gone.mkv", "grows.mkv", "same.mkv", "touched.mkv"]);
    expect(diff.removed).toEqual([]);
    expect(diff.newFolders).toEqual(["Season 01", "Season 02"]);
  });

  it("a folder emptied: every file removed, every folder gone", () => {
    const diff = diffListings(before, "");
    expect(diff.changed).toEqual([]);
    expect([...diff.removed].sort()).toEqual(["gone.mkv", "grows.mkv", "same.mkv", "touched.mkv"]);
    expect(diff.goneFolders).toEqual(["Season 01", "Season 02"]);
  });

  it("a rename within the folder: the old name removed, the new one changed", () => {
    const a = encodeListing({ folders: [], files: [file("Show - S01E01.mkv.part", 100, 7)] });
    const b = encodeListing({ folders: [], files: [file("Show - S01E01.mkv", 100, 7)] });
    expect(diffListings(a, b)).toEqual({ changed: [file("Show - S01E01.mkv", 100, 7)], created: new Set(["Show - S01E01.mkv"]), removed: ["Show - S01E01.mkv.part"], newFolders: [], goneFolders: [] });
  });

  it("a file replaced by a folder of the same name: the file removed, the folder new", () => {
    const a = encodeListing({ folders: [], files: [file("Extras")] });
    const b = encodeListing({ folders: ["Extras"], files: [] });
    expect(diffListings(a, b)).toEqual({ changed: [], created: new Set(), removed: ["Extras"], newFolders: ["Extras"], goneFolders: [] });
  });

  it("names that differ only in odd characters are different files", () => {
    const a = encodeListing({ folders: [], files: [file("a b.mkv"), file("a  b.mkv"), file("A b.mkv")] });
    const b = encodeListing({ folders: [], files: [file("a b.mkv"), file("A b.mkv", 2)] });
    expect(diffListings(a, b)).toEqual({ changed: [file("A b.mkv", 2)], created: new Set(), removed: ["a  b.mkv"], newFolders: [], goneFolders: [] });
  });
});

describe("a long listing in slices", () => {
  const files = Array.from({ length: 5_500 }, (_, i) => file(`Show - E${String((i * 7919) % 5_500).padStart(5, "0")}.mkv`, i, 1_000 + i));
  const listing = { folders: ["Extras", "Season 01"], files };
  const changed = { folders: ["Season 01"], files: [...files.slice(10, 5_000).map((f, i) => (i % 3 === 0 ? { ...f, size: f.size + 1 } : f)), file("new.mkv")] };

  it("encodes and compares as all at once does, with a turn between slices of 1,000", async () => {
    let turns = 0;
    const turn = (): Promise<void> => {
      turns += 1;
      return new Promise((resolve) => setImmediate(resolve));
    };
    const [before, after] = [encodeListing(listing), encodeListing(changed)];
    expect(await encodeListingInSlices(listing, turn)).toBe(before);
    expect(turns).toBeGreaterThanOrEqual(5);
    turns = 0;
    expect(await diffListingsInSlices(before, after, turn)).toEqual(diffListings(before, after));
    expect(turns).toBeGreaterThanOrEqual(10);
    expect(await diffListingsInSlices(undefined, before, turn)).toEqual(diffListings(undefined, before));
  });

  it("sorts as sort() does (code units: upper case, accents and CJK names)", async () => {
    const names = Array.from({ length: 3_001 }, (_, i) => ["a", "B", "é", "東京", "Z", "ä"][i % 6] + String((i * 31) % 997));
    const entries = { folders: [], files: names.map((name, i) => file(name, i)) };
    const encoded = await encodeListingInSlices(entries, () => Promise.resolve());
    expect(encoded).toBe(encodeListing(entries));
    expect(filesOf(encoded).map((f) => `${f.name}\u0000${String(f.size)}\u0000${String(f.mtimeMs)}`)).toEqual(
      names.map((name, i) => `${name}\u0000${String(i)}\u0000${String(file(name, i).mtimeMs)}`).sort(),
    );
  });
});
