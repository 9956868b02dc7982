import type pg from "pg";
import { afterAll, beforeAll, beforeEach, expect, it } from "vitest";
import { captureLog } from "../../test/support/capture-log.ts";
import { describeWithPostgres } from "../../test/support/postgres.ts";
import { createMigratedDatabase, type MigratedDatabase } from "../../test/support/postgres-schema.ts";
import { openPgCursorStore } from "./pg-cursor-store.ts";
import { openPgDriveStore } from "./pg-drive-store.ts";

/**
 * The Drive state store and the backfill cursor store on the real PostgreSQL schema (the `drive_*` tables and
 * `shared_state`): what one holder commits, the next one reads back; a page token and its cache changes commit together.
 */
let database: MigratedDatabase | undefined;
let client: pg.Client;
const { log, messages } = captureLog("info");

beforeAll(async () => {
  database = await createMigratedDatabase(log);
  client = database.client;
});
beforeEach(async () => {
  await client.query("TRUNCATE drive_item, drive_feed, drive_meta, shared_state");
});
afterAll(async () => {
  await database?.drop();
});

describeWithPostgres("PostgreSQL drive state store", () => {
  it("reads back page tokens, meta and cache entries that were committed", async () => {
    const store = await openPgDriveStore({ connection: client, log });
    expect(store.entries()).toEqual([]);
    await store.commit({
      diff: {
        upserts: new Map([
          ["f1", { name: "Media", parent: "root", folder: true }],
          ["x", { name: "a.mkv", parent: "f1", folder: false, md5: "m" }],
          ["y", { name: "b.mkv", parent: "f1", folder: false }],
        ]),
        removals: new Set(),
      },
      pageTokens: { "my-drive": "123" },
      meta: { my_drive_root_id: "root" },
    });
    await store.commit({
      diff: { upserts: new Map([["y", { name: "b2.mkv", parent: "f1", folder: false, md5: "n" }]]), removals: new Set(["x"]) },
      pageTokens: { "drive:0A": "9", "my-drive": "124" },
    });
    expect(store.pageToken("my-drive")).toBe("124");
    store.close();

    const again = await openPgDriveStore({ connection: client, log });
    expect(again.pageToken("my-drive")).toBe("124");
    expect(again.pageToken("drive:0A")).toBe("9");
    expect(again.meta("my_drive_root_id")).toBe("root");
    expect(new Map(again.entries())).toEqual(
      new Map([
        ["f1", { name: "Media", parent: "root", folder: true }],
        ["y", { name: "b2.mkv", parent: "f1", folder: false, md5: "n" }],
      ]),
    );
    await again.commit({ pageTokens: { "drive:0A": null } });
    expect(again.pageToken("drive:0A")).toBeUndefined();
    expect((await openPgDriveStore({ connection: client, log })).pageToken("drive:0A")).toBeUndefined();
  });

  it("commits a page token only together with its page's cache changes", async () => {
    const store = await openPgDriveStore({ connection: client, log });
    await store.commit({ pageTokens: { "my-drive": "1" } });
    // A page whose cache change fails (a NULL name breaks NOT NULL) leaves the token where it was, in the table and
    // in memory.
    const broken = { name: null as unknown as string, folder: false };
    await expect(
      store.commit({ diff: { upserts: new Map([["ok", { name: "fine", folder: false }], ["bad", broken]]), removals: new Set() }, pageTokens: { "my-drive": "2" } }),
    ).rejects.toThrow();
    expect(store.pageToken("my-drive")).toBe("1");
    expect(store.entries()).toEqual([]);
    const reread = await openPgDriveStore({ connection: client, log });
    expect(reread.pageToken("my-drive")).toBe("1");
    expect(reread.entries()).toEqual([]);
    // The connection is usable afterwards.
    await store.commit({ diff: { upserts: new Map([["ok", { name: "fine", folder: false }]]), removals: new Set() }, pageTokens: { "my-drive": "2" } });
    expect((await openPgDriveStore({ connection: client, log })).pageToken("my-drive")).toBe("2");
  });

  it("clears the page tokens and the cache (reset_page_token, clear_drive_cache); meta stays", async () => {
    const store = await openPgDriveStore({ connection: client, log });
    await store.commit({
      diff: { upserts: new Map([["f1", { name: "Media", folder: true }]]), removals: new Set() },
      pageTokens: { "my-drive": "5" },
      meta: { my_drive_root_id: "root" },
    });
    await store.clearPageTokens();
    expect(store.pageToken("my-drive")).toBeUndefined();
    await store.clearItems();
    expect(store.entries()).toEqual([]);
    const reread = await openPgDriveStore({ connection: client, log });
    expect(reread.pageToken("my-drive")).toBeUndefined();
    expect(reread.entries()).toEqual([]);
    expect(reread.meta("my_drive_root_id")).toBe("root");
  });

  it("commits a large page in one go", async () => {
    const store = await openPgDriveStore({ connection: client, log });
    const upserts = new Map(Array.from({ length: 5000 }, (_, i) => [`id${i}`, { name: `file ${i}.mkv`, parent: "f1", folder: false }] as const));
    await store.commit({ diff: { upserts, removals: new Set() }, pageTokens: { "my-drive": "big" } });
    expect((await openPgDriveStore({ connection: client, log })).entries()).toHaveLength(5000);
  });
});

describeWithPostgres("PostgreSQL backfill cursor store", () => {
  it("reads back each app's cursor from shared_state (backfill:<app>, date as ISO)", async () => {
    const store = await openPgCursorStore({ connection: client, log });
    expect(store.get("sonarr")).toBeUndefined();
    await store.set("sonarr", { date: Date.parse("2026-11-24T18:00:00.123Z"), id: 42 });
    await store.set("radarr", { date: 1000, id: 1 });
    await store.set("sonarr", { date: Date.parse("2026-11-25T08:00:00Z"), id: 43 });
    expect(store.get("sonarr")).toEqual({ date: Date.parse("2026-11-25T08:00:00Z"), id: 43 });

    const row = await client.query<{ value: string }>("SELECT value FROM shared_state WHERE key = 'backfill:sonarr'");
    expect(JSON.parse(row.rows[0]!.value)).toEqual({ date: "2026-11-25T08:00:00.000Z", id: 43 });
    const again = await openPgCursorStore({ connection: client, log });
    expect(again.get("sonarr")).toEqual({ date: Date.parse("2026-11-25T08:00:00Z"), id: 43 });
    expect(again.get("radarr")).toEqual({ date: 1000, id: 1 });
  });

  it("starts an app with a damaged row from now on, and leaves other keys alone", async () => {
    await client.query("INSERT INTO shared_state (key, value) VALUES ('backfill:lidarr', 'not json'), ('other', '{}')");
    const store = await openPgCursorStore({ connection: client, log });
    expect(store.get("lidarr")).toBeUndefined();
    expect(store.get("other")).toBeUndefined();
    expect(messages()).toContain("The backfill cursor of 'lidarr' in the database could not be read; its history is read from now on.");
    await store.set("lidarr", { date: 5, id: 6 });
    expect((await openPgCursorStore({ connection: client, log })).get("lidarr")).toEqual({ date: 5, id: 6 });
  });
});
