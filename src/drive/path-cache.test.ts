import { describe, expect, it } from "vitest";
import type { DriveFile } from "./drive-api.ts";
import { createPathCache, type PathLookup } from "./path-cache.ts";

function lookup(files: Record<string, DriveFile>, drives: Record<string, string> = {}): PathLookup & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    getFile: async (id) => (asked.push(id), files[id]),
    getDrive: async (id) => (asked.push(`drive:${id}`), drives[id] ? { id, name: drives[id] } : undefined),
  };
}

describe("path cache", () => {
  it("walks parents, naming My Drive's root 'My Drive' whatever its locale", async () => {
    const api = lookup({
      root: { id: "root", name: "Mon Drive" },
      m: { id: "m", name: "Media", parents: ["root"] },
    });
    const cache = createPathCache({ lookup: api, myDriveRootId: "root" });
    expect(await cache.resolvePath("m", "a.mkv")).toBe("My Drive/Media/a.mkv");
    expect(await cache.resolvePath("m", "b.mkv")).toBe("My Drive/Media/b.mkv");
    expect(api.asked).toEqual(["m", "root"]);
  });

  it("names a shared drive's root from drives.get (files.get says 'Drive')", async () => {
    const api = lookup({ "0Ad": { id: "0Ad", name: "Drive", driveId: "0Ad" }, f: { id: "f", name: "TV", parents: ["0Ad"], driveId: "0Ad" } }, { "0Ad": "Team Media" });
    const cache = createPathCache({ lookup: api });
    expect(await cache.resolvePath("f", "x.mkv")).toBe("Team Media/TV/x.mkv");
  });

  it("gives up on an ancestor it cannot see (404)", async () => {
    const cache = createPathCache({ lookup: lookup({}) });
    expect(await cache.resolvePath("gone", "x.mkv")).toBeUndefined();
  });

  it("stages changes: commit returns the diff, rollback forgets it", async () => {
    const cache = createPathCache({ lookup: lookup({}), entries: [["a", { name: "A", folder: true }]] });
    cache.put("b", { name: "B", parent: "a", folder: true });
    cache.remove("a");
    cache.rollback();
    expect(cache.get("a")).toEqual({ name: "A", folder: true });
    expect(cache.get("b")).toBeUndefined();
    cache.put("b", { name: "B", parent: "a", folder: true });
    cache.remove("a");
    const diff = cache.commit();
    expect([...diff.upserts.keys()]).toEqual(["b"]);
    expect([...diff.removals]).toEqual(["a"]);
    expect(cache.size).toBe(1);
  });
});
