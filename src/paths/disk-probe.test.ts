// @module-tag process
import { readdirSync } from "node:fs";
import { mkdir, stat, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { captureLog, makeTempDir } from "../../test/support/capture-log.ts";
import { createDiskProbe, parseMountPoints, type DirListing } from "./disk-probe.ts";

describe("createDiskProbe (a disk that answers; the hung mount is in test/paths-hung-mount.test.ts)", () => {
  it("tells a file from a folder from nothing, and counts an unreadable path as missing", async () => {
    const temp = await makeTempDir("autoscan-probe-");
    await mkdir(join(temp.dir, "folder"));
    await writeFile(join(temp.dir, "file.mkv"), "x");
    const probe = createDiskProbe({ log: captureLog().log });
    expect(await probe.stat(join(temp.dir, "folder"))).toBe("directory");
    expect(await probe.stat(join(temp.dir, "file.mkv"))).toBe("file");
    expect(await probe.stat(join(temp.dir, "nothing"))).toBe("missing");
    expect(await probe.stat(join(temp.dir, "file.mkv", "below-a-file"))).toBe("missing");
    expect(probe.inFlight()).toBe(0);
    await temp.cleanup();
  });

  it("a listing says what the folder is (its identity) and tells links apart, so that nobody looks at it again", async () => {
    const temp = await makeTempDir("autoscan-probe-");
    const show = join(temp.dir, "Show");
    await mkdir(join(show, "Season 01"), { recursive: true });
    await writeFile(join(show, "e1.mkv"), "12345");
    await symlink(join(show, "Season 01"), join(show, "loop"));
    await symlink(join(show, "e1.mkv"), join(show, "alias.mkv"));
    await symlink(join(show, "gone"), join(show, "broken"));
    await symlink(show, join(temp.dir, "Linked"));
    const probe = createDiskProbe({ log: captureLog().log });
    const info = await stat(show, { bigint: true });
    const listing = await probe.list(show);
    expect(listing).toMatchObject({
      id: `${String(info.dev)}:${String(info.ino)}:${String(info.birthtimeNs)}`,
      folders: ["Season 01"],
      links: ["loop"],
    });
    const files = typeof listing === "object" && "files" in listing ? listing.files : [];
    expect(files.map((file) => [file.name, file.size]).sort()).toEqual([["alias.mkv", 5], ["e1.mkv", 5]]);
    // A watched path that is a link is listed through it (the same folder); below one, a link is a link.
    expect(await probe.list(join(temp.dir, "Linked"))).toMatchObject({ id: (listing as { id: string }).id });
    expect(await probe.list(join(temp.dir, "Linked"), { followLink: false })).toBe("link");
    expect(await probe.list(join(show, "nothing"))).toBe("missing");
    expect(await probe.list(join(show, "e1.mkv"))).toBe("missing");
    await temp.cleanup();
  });

  it("a listing of 2,500 files (sent by the helper in parts) arrives whole, in the disk's order, and the next look gets its own answer", async () => {
    const temp = await makeTempDir("autoscan-probe-");
    const season = join(temp.dir, "Season 01");
    await mkdir(join(season, "Extras"), { recursive: true });
    for (let file = 0; file < 2_500; file++) await writeFile(join(season, `E${String(file).padStart(4, "0")}.mkv`), "x".repeat(file % 7));
    const probe = createDiskProbe({ log: captureLog().log });
    const listing = (await probe.list(season)) as DirListing;
    const names = readdirSync(season).filter((name) => name !== "Extras");
    expect(listing.files.map((file) => file.name)).toEqual(names);
    expect(listing.files.map((file) => file.size)).toEqual(names.map((name) => Number(name.slice(1, 5)) % 7));
    expect(listing).toMatchObject({ folders: ["Extras"], links: [] });
    expect(await probe.list(join(season, "Extras"))).toMatchObject({ folders: [], files: [], links: [] });
    await temp.cleanup();
  });

  it("never runs more than one look at a time under one mount", async () => {
    const temp = await makeTempDir("autoscan-probe-");
    const sample = async (probe: ReturnType<typeof createDiskProbe>): Promise<number> => {
      let done = false;
      const looks = Promise.all(Array.from({ length: 200 }, (_, i) => probe.stat(join(temp.dir, `f${i}`)))).then((all) => {
        done = true;
        return all;
      });
      let most = 0;
      while (!done) {
        most = Math.max(most, probe.inFlight());
        await new Promise((resolve) => setImmediate(resolve));
      }
      expect(new Set(await looks)).toEqual(new Set(["missing"]));
      expect(probe.inFlight()).toBe(0);
      return most;
    };
    expect(await sample(createDiskProbe({ log: captureLog().log }))).toBe(1);
    await temp.cleanup();
  });
});

describe("parseMountPoints", () => {
  it("does not call a healthy disk hung when the process was too busy to hear its answer", async () => {
    const temp = await makeTempDir("autoscan-probe-");
    await writeFile(join(temp.dir, "file.mkv"), "x");
    const logs = captureLog();
    const probe = createDiskProbe({ log: logs.log, timeoutMs: 200 });
    const looks = Promise.all(Array.from({ length: 4 }, () => probe.stat(join(temp.dir, "file.mkv"))));
    while (probe.inFlight() === 0) await new Promise((resolve) => setImmediate(resolve));
    // The event loop held for three timeouts (a large synchronous piece of work): the stats returned meanwhile, but
    // their answers wait behind the timers.
    const until = Date.now() + 600;
    while (Date.now() < until) {
      // busy
    }
    expect(await looks).toEqual(["file", "file", "file", "file"]);
    expect(probe.unresponsiveMounts()).toEqual([]);
    expect(logs.records.filter((record) => record.level >= 40)).toEqual([]);
    await temp.cleanup();
  });

  it("reads field 5 of /proc/self/mountinfo, decodes its escapes, longest first", () => {
    const text = [
      "21 26 0:20 / /proc rw,relatime - proc proc rw",
      "26 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw",
      "41 26 0:38 / /mnt/My\\040Media rw,relatime - fuse.rclone gdrive: rw,user_id=0",
      "",
    ].join("\n");
    expect(parseMountPoints(text)).toEqual(["/mnt/My Media", "/proc", "/"]);
  });
});
