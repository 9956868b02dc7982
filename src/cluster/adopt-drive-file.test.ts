import { access } from "node:fs/promises";
import { join } from "node:path";
import { expect, it } from "vitest";
import { captureLog, makeTempDir } from "../../test/support/capture-log.ts";
import { describeWithPostgres } from "../../test/support/postgres.ts";
import { createMigratedDatabase } from "../../test/support/postgres-schema.ts";
import { openPgDriveStore } from "./pg-drive-store.ts";
import { openDriveStateStore } from "../drive/drive-store.ts";
import { adoptDriveFile, MOVED_DRIVE_SUFFIX } from "./adopt-drive-file.ts";

describeWithPostgres("switching Drive monitoring to PostgreSQL", () => {
  it("goes on from the instance's cache file once: its page tokens, names and facts move in, the file is renamed", async () => {
    const temp = await makeTempDir();
    const { log } = captureLog();
    const database = await createMigratedDatabase(log);
    const { client } = database;
    try {
      const file = join(temp.dir, "cache.db");
      const old = await openDriveStateStore({ path: file, log });
      await old.commit({
        diff: { upserts: new Map([["f1", { name: "Media", parent: "root", folder: true }]]), removals: new Set() },
        pageTokens: { mydrive: "1234", "drive:0A": "77" },
        meta: { rootId: "root" },
      });
      old.close();

      const shared = await openPgDriveStore({ connection: client, log });
      expect(await adoptDriveFile(shared, file, log)).toBe(true);
      const again = await openPgDriveStore({ connection: client, log });
      expect(again.pageTokens()).toEqual({ mydrive: "1234", "drive:0A": "77" });
      expect(again.metas()).toEqual({ rootId: "root" });
      expect(again.entries()).toEqual([["f1", { name: "Media", parent: "root", folder: true }]]);
      await expect(access(file)).rejects.toThrow();
      await access(file + MOVED_DRIVE_SUFFIX);
      // `reset_page_token` later: the old tokens never come back.
      await again.clearPageTokens();
      expect(await adoptDriveFile(again, file, log)).toBe(false);
      expect(again.pageTokens()).toEqual({});
    } finally {
      await database.drop();
      await temp.cleanup();
    }
  });

  it("leaves the shared store alone when it already has page tokens (another instance polled first)", async () => {
    const temp = await makeTempDir();
    const { log } = captureLog();
    const database = await createMigratedDatabase(log);
    const { client } = database;
    try {
      const file = join(temp.dir, "cache.db");
      const old = await openDriveStateStore({ path: file, log });
      await old.commit({ pageTokens: { mydrive: "old" } });
      old.close();
      const shared = await openPgDriveStore({ connection: client, log });
      await shared.commit({ pageTokens: { mydrive: "newer" } });
      expect(await adoptDriveFile(shared, file, log)).toBe(false);
      expect(shared.pageTokens()).toEqual({ mydrive: "newer" });
      await access(file);
    } finally {
      await database.drop();
      await temp.cleanup();
    }
  });
});
