import { mkdir, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { captureLog, makeTempDir } from "../../test/support/capture-log.ts";
import { openCursorStore } from "./cursor-store.ts";

/** The backfill cursors on a real disk: a round trip, a damaged file, serialised and durable writes. */
let dir: string;
let cleanup: () => Promise<void>;
let file: string;

beforeEach(async () => {
  ({ dir, cleanup } = await makeTempDir("autoscan-cursors-"));
  file = join(dir, "backfill.json");
});

afterEach(async () => {
  await cleanup();
});

const WARN = 40;

describe("cursor store", () => {
  it("round trip: what is set is read back by a new store, as ISO dates in a small JSON file", async () => {
    const { log, records } = captureLog();
    const store = await openCursorStore(file, log);
    expect(store.get("sonarr")).toBeUndefined();
    await store.set("sonarr", { date: Date.parse("2026-06-21T09:37:52Z"), id: 41 });
    await store.set("radarr-4k", { date: Date.parse("2026-06-21T10:00:00.123Z"), id: 7 });
    await store.set("sonarr", { date: Date.parse("2026-06-21T09:40:00Z"), id: 42 });
    expect(store.get("sonarr")).toEqual({ date: Date.parse("2026-06-21T09:40:00Z"), id: 42 });

    const reopened = await openCursorStore(file, log);
    expect(reopened.get("sonarr")).toEqual({ date: Date.parse("2026-06-21T09:40:00Z"), id: 42 });
    expect(reopened.get("radarr-4k")).toEqual({ date: Date.parse("2026-06-21T10:00:00.123Z"), id: 7 });
    expect(JSON.parse(await readFile(file, "utf8"))).toEqual({
      version: 1,
      apps: { sonarr: { date: "2026-06-21T09:40:00.000Z", id: 42 }, "radarr-4k": { date: "2026-06-21T10:00:00.123Z", id: 7 } },
    });
    expect(records.filter((record) => record.level >= WARN)).toEqual([]);
  });

  it.each([
    ["a torn write", '{"version":1,"apps":{"sonarr":{"date":"2026-06-21T09:'],
    ["null", "null"],
    ["an app that is not an object", '{"version":1,"apps":{"sonarr":null}}'],
    ["binary junk", "\u0000\u0001\u00ff garbage"],
  ])("a damaged file (%s) is kept aside as .damaged with one warning; every app reads from now", async (_what, text) => {
    await writeFile(file, text);
    const { log, records } = captureLog();
    const store = await openCursorStore(file, log);
    expect(store.get("sonarr")).toBeUndefined();
    expect(await readFile(`${file}.damaged`, "utf8")).toBe(text);
    expect(await readdir(dir)).toEqual(["backfill.json.damaged"]);
    const warnings = records.filter((record) => record.level >= WARN);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.msg).toBe(`The backfill cursors in '${file}' could not be read; kept as '${file}.damaged'. Each app's history is read from now on.`);

    // The store goes on: the next move writes a whole new file, and a reopen reads it without a word.
    await store.set("sonarr", { date: 1_000, id: 1 });
    const again = captureLog();
    expect((await openCursorStore(file, again.log)).get("sonarr")).toEqual({ date: 1_000, id: 1 });
    expect(again.records.filter((record) => record.level >= WARN)).toEqual([]);
  });

  it("writes are serialised: concurrent sets all land, the last set of an app wins", async () => {
    const { log } = captureLog();
    const store = await openCursorStore(file, log);
    const apps = Array.from({ length: 40 }, (_, index) => `app-${index}`);
    // Every app set three times at once, in order: each call starts before any has finished.
    const calls = [1, 2, 3].flatMap((round) => apps.map((app, index) => store.set(app, { date: round * 1_000 + index, id: round })));
    await Promise.all(calls);
    const reopened = await openCursorStore(file, log);
    for (const [index, app] of apps.entries()) expect(reopened.get(app)).toEqual({ date: 3_000 + index, id: 3 });
  });

  it("a failed write leaves the cursor where it was, and the next set still runs", async () => {
    const { log } = captureLog();
    const nested = join(dir, "data", "backfill.json");
    const store = await openCursorStore(nested, log);
    await store.set("sonarr", { date: 1_000, id: 1 });
    // The data folder replaced by a file: the next write cannot make its temporary file there.
    await rm(join(dir, "data"), { recursive: true });
    await writeFile(join(dir, "data"), "not a folder");
    await expect(store.set("sonarr", { date: 2_000, id: 2 })).rejects.toThrow();
    expect(store.get("sonarr")).toEqual({ date: 1_000, id: 1 });
    await rm(join(dir, "data"));
    await mkdir(join(dir, "data"));
    await store.set("radarr", { date: 3_000, id: 3 });
    const reopened = await openCursorStore(nested, log);
    expect(reopened.get("radarr")).toEqual({ date: 3_000, id: 3 });
    expect(reopened.get("sonarr")).toEqual({ date: 1_000, id: 1 });
  });

  it("the file is replaced whole: a reader never sees a partial file, and no temporary file is left", async () => {
    const { log, records } = captureLog();
    const store = await openCursorStore(file, log);
    let done = false;
    let reads = 0;
    // A reader polling the file all along: every read is absent (before the first write) or whole JSON.
    const reader = (async () => {
      while (!done) {
        const text = await readFile(file, "utf8").catch((error: NodeJS.ErrnoException) => {
          if (error.code === "ENOENT") return undefined;
          throw error;
        });
        if (text !== undefined) {
          expect(() => JSON.parse(text) as unknown).not.toThrow();
          reads += 1;
        }
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    const sets = Array.from({ length: 200 }, (_, index) => store.set(`app-${index % 25}`, { date: 10_000 + index, id: index }));
    await Promise.all(sets);
    done = true;
    await reader;
    expect(reads).toBeGreaterThan(0);
    expect(await readdir(dir)).toEqual(["backfill.json"]);
    const shape = JSON.parse(await readFile(file, "utf8")) as { apps: Record<string, { id: number }> };
    expect(Object.keys(shape.apps)).toHaveLength(25);
    expect(shape.apps["app-0"]?.id).toBe(175);
    expect(records.filter((record) => record.level >= WARN)).toEqual([]);
  });
});
