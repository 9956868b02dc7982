import { describe, expect, it } from "vitest";
import { createPathMapper } from "./mapping.ts";

const mappings = {
  "/data/Movies/": ["/mnt/unionfs/Media/Movies/", "/home/user/media/Movies/", "My Drive/Media/Movies/"],
  "/data/Movies4K/": ["/mnt/unionfs/Media/Movies4K/"],
  "/data/TV/": ["/mnt/unionfs/Media/TV/", "C:\\Media\\TV\\", "\\\\nas\\media\\TV\\", "Shared Media/TV/"],
  "/data/": ["/mnt/unionfs/Media/"],
};
const mapper = createPathMapper({ mappings, existMappings: { "/local/rclone/Movies/": ["/data/Movies/"] } });

describe("toServer", () => {
  it.each([
    ["container form → server form", "/mnt/unionfs/Media/Movies/Heat (1995)/Heat.mkv", "/data/Movies/Heat (1995)/Heat.mkv"],
    ["host form → server form", "/home/user/media/Movies/Heat (1995)", "/data/Movies/Heat (1995)"],
    ["drive form → server form", "My Drive/Media/Movies/Heat (1995)/Heat.mkv", "/data/Movies/Heat (1995)/Heat.mkv"],
    ["server form stays", "/data/Movies/Heat (1995)/Heat.mkv", "/data/Movies/Heat (1995)/Heat.mkv"],
    ["unmapped passes unchanged", "/srv/other/x.mkv", "/srv/other/x.mkv"],
    ["whole segments: Movies never matches Movies4K", "/mnt/unionfs/Media/Movies4K/Dune/Dune.mkv", "/data/Movies4K/Dune/Dune.mkv"],
    ["longest form wins over a shorter one listed under another key", "/mnt/unionfs/Media/Music/a.flac", "/data/Music/a.flac"],
    ["form without its trailing slash → the key", "/mnt/unionfs/Media/Movies", "/data/Movies/"],
    ["Windows drive path", "C:\\Media\\TV\\Show\\Season 1\\e01.mkv", "/data/TV/Show/Season 1/e01.mkv"],
    ["Windows path in other case (Windows is case-insensitive)", "c:\\media\\tv\\Show\\e01.mkv", "/data/TV/Show/e01.mkv"],
    ["UNC share", "\\\\nas\\media\\TV\\Show\\e01.mkv", "/data/TV/Show/e01.mkv"],
    ["shared drive form", "Shared Media/TV/Show/e01.mkv", "/data/TV/Show/e01.mkv"],
    ["doubled slashes are folded", "/mnt/unionfs//Media/Movies//X/x.mkv", "/data/Movies/X/x.mkv"],
    ["quotes, brackets, spaces pass intact", "/mnt/unionfs/Media/Movies/It's [2017] (Director's Cut)/a b.mkv", "/data/Movies/It's [2017] (Director's Cut)/a b.mkv"],
    ["non-Latin names pass intact", "/mnt/unionfs/Media/Movies/千と千尋の神隠し (2001)/映画.mkv", "/data/Movies/千と千尋の神隠し (2001)/映画.mkv"],
    ["case matters on POSIX", "/mnt/unionfs/media/movies/X/x.mkv", "/mnt/unionfs/media/movies/X/x.mkv"],
  ])("%s", (_name, input, expected) => {
    expect(mapper.toServer(input).path).toBe(expected);
  });

  it("compares prefixes in NFC, but keeps the received bytes after the prefix", () => {
    const decomposed = "/mnt/unionfs/Media/Movies/Ame\u0301lie (2001)/x.mkv";
    expect(mapper.toServer(decomposed).path).toBe("/data/Movies/Ame\u0301lie (2001)/x.mkv");
    expect(mapper.toServer(decomposed.normalize("NFC")).path).toBe("/data/Movies/Am\u00e9lie (2001)/x.mkv");
    // A form typed in NFD matches a path sent in NFC (and back); the server prefix is spelled as the user wrote it.
    const nfdForm = createPathMapper({ mappings: { "/data/Am\u00e9lie/": ["/mnt/Ame\u0301lie/"] } });
    expect(nfdForm.toServer("/mnt/Am\u00e9lie/Pok\u00e9mon/x.mkv")).toEqual({
      path: "/data/Am\u00e9lie/Pok\u00e9mon/x.mkv",
      from: "/mnt/Ame\u0301lie/",
      known: true,
    });
    expect(nfdForm.toServer("/mnt/Ame\u0301lie/Poke\u0301mon/x.mkv").path).toBe("/data/Am\u00e9lie/Poke\u0301mon/x.mkv");
    // A path already in the server form passes as received, whatever spelling it uses.
    expect(nfdForm.toServer("/data/Ame\u0301lie/x.mkv")).toEqual({ path: "/data/Ame\u0301lie/x.mkv", known: true });
  });

  it("keeps the received bytes of a Windows path's rest while folding its prefix's case", () => {
    expect(mapper.toServer("c:\\media\\tv\\Poke\u0301mon\\e01.mkv").path).toBe("/data/TV/Poke\u0301mon/e01.mkv");
  });

  it("reports which form matched and whether the path was known", () => {
    expect(mapper.toServer("/mnt/unionfs/Media/Movies/X")).toEqual({
      path: "/data/Movies/X",
      from: "/mnt/unionfs/Media/Movies/",
      known: true,
    });
    expect(mapper.toServer("/data/Movies/X")).toEqual({ path: "/data/Movies/X", known: true });
    expect(mapper.toServer("/elsewhere/X")).toEqual({ path: "/elsewhere/X", known: false });
  });

  it("does not match mid-segment, unlike plex_autoscan", () => {
    const strict = createPathMapper({ mappings: { "/data/Movies/": ["/mnt/Movies/"] } });
    expect(strict.toServer("/mnt/Movies4K/x.mkv").path).toBe("/mnt/Movies4K/x.mkv");
    expect(strict.toServer("/mnt/Movies/x.mkv").path).toBe("/data/Movies/x.mkv");
  });

  it("picks the longest form whatever the order in the file", () => {
    const ordered = createPathMapper({ mappings: { "/a/": ["/mnt/"], "/b/": ["/mnt/deep/"] } });
    expect(ordered.toServer("/mnt/deep/x").path).toBe("/b/x");
    expect(ordered.toServer("/mnt/shallow/x").path).toBe("/a/shallow/x");
  });
});

describe("reverse directions", () => {
  it("localForms: exist mapping first, then the server form, then the listed absolute forms in file order", () => {
    expect(mapper.localForms("/data/Movies/Heat (1995)/Heat.mkv")).toEqual([
      "/local/rclone/Movies/Heat (1995)/Heat.mkv",
      "/data/Movies/Heat (1995)/Heat.mkv",
      "/mnt/unionfs/Media/Movies/Heat (1995)/Heat.mkv",
      "/home/user/media/Movies/Heat (1995)/Heat.mkv",
    ]);
  });

  it("localForms keep the server path's bytes after every prefix", () => {
    const nfd = "/data/Movies/Ame\u0301lie (2001)/x.mkv";
    expect(mapper.localForms(nfd)).toEqual([
      "/local/rclone/Movies/Ame\u0301lie (2001)/x.mkv",
      nfd,
      "/mnt/unionfs/Media/Movies/Ame\u0301lie (2001)/x.mkv",
      "/home/user/media/Movies/Ame\u0301lie (2001)/x.mkv",
    ]);
    expect(mapper.toDrive(nfd)).toBe("My Drive/Media/Movies/Ame\u0301lie (2001)/x.mkv");
  });

  it("localForms of an unmapped path is the path itself", () => {
    expect(mapper.localForms("/srv/x.mkv")).toEqual(["/srv/x.mkv"]);
  });

  it("toDrive gives the drive form", () => {
    expect(mapper.toDrive("/data/Movies/Heat (1995)/Heat.mkv")).toBe("My Drive/Media/Movies/Heat (1995)/Heat.mkv");
    expect(mapper.toDrive("/data/TV/Show/e01.mkv")).toBe("Shared Media/TV/Show/e01.mkv");
    expect(mapper.toDrive("/data/Movies4K/x.mkv")).toBeUndefined();
  });

  it("round-trips: drive form → server form → drive form", () => {
    const drive = "My Drive/Media/Movies/Amélie (2001)/Amélie.mkv";
    expect(mapper.toDrive(mapper.toServer(drive).path)).toBe(drive);
  });
});
