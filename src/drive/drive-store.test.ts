import { mkdtemp, readdir, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openDriveStateStore } from "./drive-store.ts";

const log = pino({ level: "silent" });
let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "drive-store-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("drive state store (cache.db)", () => {
  it("persists page tokens, meta and cache entries across opens (file mode 0600)", async () => {
    const path = join(dir, "cache.db");
    const store = await openDriveStateStore({ path, log });
    await store.commit({
      diff: { upserts: new Map([["f1", { name: "Media", parent: "root", folder: true }], ["x", { name: "a.mkv", parent: "f1", folder: false, md5: "m" }]]), removals: new Set() },
      pageTokens: { "my-drive": "123" },
      meta: { my_drive_root_id: "root" },
    });
    await store.commit({ diff: { upserts: new Map(), removals: new Set(["x"]) }, pageTokens: { "drive:0A": "9" } });
    store.close();
    expect((await stat(path)).mode & 0o777).toBe(0o600);

    const again = await openDriveStateStore({ path, log });
    expect(again.pageToken("my-drive")).toBe("123");
    expect(again.pageToken("drive:0A")).toBe("9");
    expect(again.meta("my_drive_root_id")).toBe("root");
    expect(again.entries()).toEqual([["f1", { name: "Media", parent: "root", folder: true }]]);
    await again.clearPageTokens();
    await again.clearItems();
    expect(again.pageToken("my-drive")).toBeUndefined();
    again.close();
    const third = await openDriveStateStore({ path, log });
    expect(third.entries()).toEqual([]);
    expect(third.meta("my_drive_root_id")).toBe("root");
    third.close();
  });

  it("moves an unreadable file aside and starts afresh", async () => {
    const path = join(dir, "cache.db");
    await writeFile(path, "this is not sqlite, not even close".repeat(200));
    const store = await openDriveStateStore({ path, log });
    expect(store.entries()).toEqual([]);
    await store.commit({ pageTokens: { "my-drive": "1" } });
    store.close();
    expect((await readdir(dir)).some((name) => name.startsWith("cache.db.corrupt-"))).toBe(true);
  });
});
