import pino from "pino";
import { describe, expect, it } from "vitest";
import { TargetUnavailableError } from "../../core/errors.ts";
import { createSteppingClock } from "../../../test/support/plex-clock.ts";
import { createSectionResolver, matchSections, type PlexSection } from "./sections.ts";

const log = pino({ level: "silent" });

function section(id: string, title: string, ...locations: string[]): PlexSection {
  return { id, title, type: "movie", locations, refreshing: false };
}

const library = [
  section("1", "Movies", "/data/Movies"),
  section("2", "Movies 4K", "/data/Movies4K"),
  section("3", "TV", "/data/TV", "/data2/TV"),
  section("4", "Kids", "/data/Movies/Kids"),
  section("5", "Everything", "/data/"),
  section("6", "Windows", "D:\\Media\\Films"),
];

const ids = (sections: PlexSection[]): string[] => sections.map((s) => s.id);

describe("matchSections", () => {
  it.each([
    ["/data/Movies/Heat (1995)", ["1", "5"]],
    ["/data/Movies4K/Heat (1995)", ["2", "5"]],
    ["/data/Movies", ["1", "5"]],
    ["/data/Movies/", ["1", "5"]],
    ["/data/Movies/Kids/Up (2009)", ["4", "1", "5"]],
    ["/data2/TV/Show/Season 01", ["3"]],
    ["/data/TV/Show", ["3", "5"]],
    ["/data", ["5"]],
    ["/other/Movies/X", []],
    ["/dat", []],
    ["d:/media/films/Heat (1995)", ["6"]],
    ["D:\\Media\\Films\\Heat", ["6"]],
    ["D:\\Media\\Films2\\Heat", []],
  ])("%s → %j", (folder, expected) => {
    expect(ids(matchSections(library, folder))).toEqual(expected);
  });

  it("does not match a folder that merely starts with a location's text", () => {
    expect(matchSections([section("1", "Movies", "/data/Movies")], "/data/Movies4K/X")).toEqual([]);
  });

  it("matches unicode folders in either normal form", () => {
    const sections = [section("7", "Films", "/data/Films/Amélie")];
    expect(ids(matchSections(sections, "/data/Films/Ame\u0301lie/x"))).toEqual(["7"]);
  });
});

describe("createSectionResolver", () => {
  function setup(initial: PlexSection[]) {
    const state = { sections: initial, calls: 0, fail: false };
    const clock = createSteppingClock();
    const client = {
      async listSections() {
        state.calls += 1;
        if (state.fail) throw new TargetUnavailableError("Plex is down");
        return state.sections;
      },
    };
    const resolver = createSectionResolver({ client, clock, log, refreshMs: 60_000, missRefreshMs: 5_000 });
    return { state, clock, resolver };
  }

  it("caches the list between resolves", async () => {
    const { state, resolver } = setup(library);
    await resolver.resolve("/data/Movies/A");
    await resolver.resolve("/data/TV/B");
    expect(state.calls).toBe(1);
  });

  it("fetches again after refreshMs", async () => {
    const { state, clock, resolver } = setup(library);
    await resolver.resolve("/data/Movies/A");
    clock.advance(60_000);
    await resolver.resolve("/data/Movies/A");
    expect(state.calls).toBe(2);
  });

  it("fetches again on a miss, so a library added after start-up is found", async () => {
    const { state, clock, resolver } = setup([section("1", "Movies", "/data/Movies")]);
    expect(ids(await resolver.resolve("/data/Music/Album"))).toEqual([]);
    state.sections = [...state.sections, section("9", "Music", "/data/Music")];
    clock.advance(5_000);
    expect(ids(await resolver.resolve("/data/Music/Album"))).toEqual(["9"]);
    expect(state.calls).toBe(2);
  });

  it("does not fetch on every miss in a burst", async () => {
    const { state, resolver } = setup([section("1", "Movies", "/data/Movies")]);
    for (let i = 0; i < 5; i++) await resolver.resolve(`/nowhere/${i}`);
    expect(state.calls).toBe(1);
  });

  it("keeps serving the old list while Plex is down, and throws when it never had one", async () => {
    const { state, clock, resolver } = setup(library);
    await resolver.list();
    state.fail = true;
    clock.advance(60_000);
    expect(ids(await resolver.resolve("/data/Movies/A"))).toEqual(["1", "5"]);

    const fresh = setup(library);
    fresh.state.fail = true;
    await expect(fresh.resolver.resolve("/data/Movies/A")).rejects.toBeInstanceOf(TargetUnavailableError);
  });

  it("shares one request between concurrent callers", async () => {
    const { state, resolver } = setup(library);
    await Promise.all([resolver.list(), resolver.list(), resolver.resolve("/data/TV/x")]);
    expect(state.calls).toBe(1);
  });
});
