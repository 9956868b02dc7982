import { join } from "node:path";
import { expect, it } from "vitest";
import { captureLog, makeTempDir } from "../../test/support/capture-log.ts";
import { describeWithPostgres } from "../../test/support/postgres.ts";
import { createMigratedDatabase } from "../../test/support/postgres-schema.ts";
import { openCursorStore } from "../backfill/cursor-store.ts";
import { openPgCursorStore } from "./pg-cursor-store.ts";
import { adoptFileCursors } from "./from-config.ts";

describeWithPostgres("switching the backfill to PostgreSQL", () => {
  it("goes on from backfill.json for each app the database has no cursor for, and leaves the others", async () => {
    const temp = await makeTempDir();
    const { log } = captureLog();
    const database = await createMigratedDatabase(log);
    const { client } = database;
    try {
      const file = join(temp.dir, "backfill.json");
      const old = await openCursorStore(file, log);
      await old.set("sonarr", { date: Date.UTC(2026, 10, 1), id: 41 });
      await old.set("radarr", { date: Date.UTC(2026, 10, 2), id: 7 });
      const shared = await openPgCursorStore({ connection: client, log });
      await shared.set("radarr", { date: Date.UTC(2026, 10, 20), id: 99 });
      await adoptFileCursors(shared, file, ["sonarr", "radarr", "lidarr"], log);
      const again = await openPgCursorStore({ connection: client, log });
      expect(again.get("sonarr")).toEqual({ date: Date.UTC(2026, 10, 1), id: 41 });
      expect(again.get("radarr")).toEqual({ date: Date.UTC(2026, 10, 20), id: 99 });
      expect(again.get("lidarr")).toBeUndefined();
    } finally {
      await database.drop();
      await temp.cleanup();
    }
  });
});
