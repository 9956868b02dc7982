import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { TargetUnavailableError } from "../../core/errors.ts";
import { makeTempDir } from "../../../test/support/capture-log.ts";
import { startFakePlex, type FakePlex } from "../../../test/support/fake-plex.ts";
import { createSteppingClock, type SteppingClock } from "../../../test/support/plex-clock.ts";
import { createPlexClient, type PlexClient } from "./client.ts";
import { createPlexLibraryLookup } from "./library-lookup.ts";
import { createSectionActivity, createSectionResolver } from "./sections.ts";

/**
 * The Plex lookup over real HTTP against the fake Plex, whose library is filled by scans from a temp directory
 * (server `/data/...` → `<tmp>/...`), and whose `/all?file=` answers a file's whole folder as Plex does on shows.
 */
const log = pino({ level: "silent" });
const season = "/data/TV/Show/Season 01";
const episode = (n: number): string => `${season}/Show - S01E${String(n).padStart(2, "0")}.mkv`;

let plex: FakePlex;
let root: Awaited<ReturnType<typeof makeTempDir>>;
let client: PlexClient;
let clock: SteppingClock;

const local = (serverPath: string): string => join(root.dir, serverPath.slice("/data/".length));
const put = (serverPath: string): void => {
  mkdirSync(local(serverPath).slice(0, local(serverPath).lastIndexOf("/")), { recursive: true });
  writeFileSync(local(serverPath), "");
};
const signal = (): AbortSignal => new AbortController().signal;
const lookupRequests = (): string[] => plex.requests.filter((r) => r.path.endsWith("/all")).map((r) => r.rawQuery);

function lookup(bounds: { idleMaxMs?: number } = {}) {
  const sections = createSectionResolver({ client, clock, log });
  const activity = createSectionActivity({ client, clock, log });
  return createPlexLibraryLookup({ client, sections, activity, log, ...bounds });
}

beforeEach(async () => {
  root = await makeTempDir("autoscan-plex-lookup-");
  plex = await startFakePlex({
    sections: [
      { key: "1", title: "Movies", type: "movie", locations: ["/data/Movies"] },
      { key: "2", title: "TV", type: "show", locations: ["/data/TV"] },
      { key: "3", title: "Photos", type: "photo", locations: ["/data/Photos"] },
    ],
    toLocal: (serverPath) => (serverPath.startsWith("/data/") ? local(serverPath) : undefined),
  });
  client = createPlexClient({ url: plex.url, token: plex.token });
  clock = createSteppingClock();
});
afterEach(async () => {
  await plex.close();
  await root.cleanup();
});

describe("the Plex library lookup", () => {
  it("answers true for a file Plex imported after its folder was scanned, and gives Plex 5 s to list the scan it was asked for", async () => {
    put(episode(1));
    await client.refreshSection("2", season);
    const found = await lookup().find([episode(1)], signal());
    expect(found).toEqual(new Map([[episode(1), true]]));
    expect(lookup().settleMs).toBe(5_000);
  });

  it("answers false for a file on disk that Plex never imported", async () => {
    put(episode(1));
    plex.library.setNever(true);
    await client.refreshSection("2", season);
    expect(await lookup().find([episode(1)], signal())).toEqual(new Map([[episode(1), false]]));
  });

  it("does not take the neighbourhood Plex answers (the other episodes) for the missing episode", async () => {
    put(episode(1));
    put(episode(2));
    await client.refreshSection("2", season);
    // Plex's answer for the missing episode is the rest of the season: not empty, and still not a match.
    expect(await client.filesInSection("2", 4, episode(3), signal())).toEqual([episode(1), episode(2)]);
    const found = await lookup().find([episode(2), episode(3)], signal());
    expect(found).toEqual(new Map([[episode(2), true], [episode(3), false]]));
  });

  it("asks once per season: Plex's answer for one episode confirms the others it lists, and a missing one is asked for itself", async () => {
    for (let n = 1; n <= 6; n++) put(episode(n));
    await client.refreshSection("2", season);
    const found = await lookup().find([1, 2, 3, 4, 5, 6, 7].map(episode), signal());
    expect([...found.values()]).toEqual([true, true, true, true, true, true, false]);
    expect(lookupRequests()).toHaveLength(2);
  });

  it("answers false for a file deleted from disk once its folder was scanned again", async () => {
    put(episode(1));
    put(episode(2));
    await client.refreshSection("2", season);
    rmSync(local(episode(1)));
    await client.refreshSection("2", season);
    expect(await lookup().find([episode(1), episode(2)], signal())).toEqual(
      new Map([[episode(1), false], [episode(2), true]]),
    );
  });

  it("asks only once the section's scan is over, polling every 5 s", async () => {
    put(episode(1));
    await client.refreshSection("2", season);
    plex.setBusy("2", 5);
    const askedWhileBusy: number[] = [];
    clock.onSleep = () => void askedWhileBusy.push(lookupRequests().length);
    expect(await lookup().find([episode(1)], signal())).toEqual(new Map([[episode(1), true]]));
    expect(clock.sleeps.length).toBeGreaterThan(0);
    expect(clock.sleeps.every((ms) => ms === 5_000)).toBe(true);
    expect(askedWhileBusy.every((asked) => asked === 0)).toBe(true);
    expect(lookupRequests()).toHaveLength(1);
  });

  it("looks anyway once the wait reached its bound", async () => {
    put(episode(1));
    await client.refreshSection("2", season);
    plex.setBusy("2", 1_000_000);
    expect(await lookup({ idleMaxMs: 20_000 }).find([episode(1)], signal())).toEqual(new Map([[episode(1), true]]));
    expect(clock.sleeps.reduce((sum, ms) => sum + ms, 0)).toBe(20_000);
  });

  it("throws TargetUnavailableError while Plex is down, and when the lookup itself gets a 503", async () => {
    const plexLookup = lookup();
    plex.setDown("reset");
    await expect(plexLookup.find([episode(1)], signal())).rejects.toBeInstanceOf(TargetUnavailableError);
    plex.setDown(false);
    plex.failNext(/\/all$/, 503, 1);
    await expect(plexLookup.find([episode(1)], signal())).rejects.toBeInstanceOf(TargetUnavailableError);
  });

  it("answers false for a file in no section, or only in a photo section, without asking Plex's library", async () => {
    const nowhere = "/elsewhere/Show/e1.mkv";
    const photo = "/data/Photos/2024/img.jpg";
    put(photo);
    await client.refreshSection("3", "/data/Photos/2024");
    expect(await lookup().find([nowhere, photo], signal())).toEqual(new Map([[nowhere, false], [photo, false]]));
    expect(lookupRequests()).toEqual([]);
  });

  it("sends the type and the exact path form-encoded (space, '&', '+') and matches the name exactly", async () => {
    const movie = "/data/Movies/Tom & Jerry + Friends (2020)/Tom & Jerry + Friends (2020).mkv";
    put(movie);
    await client.refreshSection("1", "/data/Movies/Tom & Jerry + Friends (2020)");
    expect(await lookup().find([movie], signal())).toEqual(new Map([[movie, true]]));
    const encoded = "%2Fdata%2FMovies%2FTom+%26+Jerry+%2B+Friends+%282020%29";
    const paging = "X-Plex-Container-Start=0&X-Plex-Container-Size=200";
    expect(lookupRequests()).toEqual([`type=1&file=${encoded}${encoded.slice("%2Fdata%2FMovies".length)}.mkv&${paging}`]);
  });

  it("the fake answers 500 to an untyped listing of a show section, like Plex", async () => {
    const answer = await fetch(`${plex.url}/library/sections/2/all?file=${encodeURIComponent(episode(1))}`, {
      headers: { "X-Plex-Token": plex.token, Accept: "application/json" },
    });
    expect(answer.status).toBe(500);
  });
});
