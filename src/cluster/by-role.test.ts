import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { captureLog } from "../../test/support/capture-log.ts";
import { startFakeGoogle, type FakeGoogle } from "../../test/support/fake-google.ts";
import { createTestDatabase, describeWithPostgres, dropTestDatabase } from "../../test/support/postgres.ts";
import { createBackfill, type BackfillApp } from "../backfill/backfill.ts";
import type { CursorStore } from "../backfill/cursor-store.ts";
import { systemClock } from "../core/clock.ts";
import type { ScanRequest, ScanSink } from "../core/scan.ts";
import { connectDrive } from "../drive/credentials.ts";
import type { DriveStateStore } from "../drive/drive-store.ts";
import { createDriveMonitor } from "../drive/poller.ts";
import { SCOPE_METADATA_READONLY } from "../drive/scope.ts";
import { createTokenStore, type TokenStore } from "../drive/token-store.ts";
import { createPathMapper } from "../paths/mapping.ts";
import { migratePostgres } from "../queue/postgres/migrate.ts";
import { pgMigrations } from "../queue/postgres/migrations/index.ts";
import { openPgPool } from "../queue/postgres/pool.ts";
import { backfillByRole } from "./backfill-by-role.ts";
import { driveMonitorByRole } from "./drive-by-role.ts";
import { RoleStandbyError } from "./role-names.ts";

/**
 * The Drive monitor and the backfill as two instances sharing one database run them: one instance works, the other
 * says "standby" and which instance works, refuses the commands naming it, and takes over at a stop, going on from
 * the page tokens and cursors the first one stored (no "from now on" restart). Real PostgreSQL, the fake Google.
 */
const CLIENT_ID = "1234567890-test.apps.googleusercontent.com";
const CLIENT_SECRET = "GOCSPX-test-secret";
let url: string;
let google: FakeGoogle;
let dir: string;
let tokenStore: TokenStore;
const running: { stop(): Promise<void> }[] = [];

beforeAll(async () => {
  url = await createTestDatabase();
  const { log } = captureLog("fatal");
  const pool = openPgPool({ url, log, applicationName: "autoscan test" });
  await migratePostgres(pool, pgMigrations, log);
  await pool.end();
  google = await startFakeGoogle();
  google.addClient(CLIENT_ID, CLIENT_SECRET);
  dir = await mkdtemp(join(tmpdir(), "autoscan-roles-"));
  tokenStore = createTokenStore({ path: join(dir, "drive-token.json") });
  await tokenStore.save({ clientId: CLIENT_ID, refreshToken: google.issueRefreshToken(CLIENT_ID, SCOPE_METADATA_READONLY) });
});
afterEach(async () => {
  await Promise.all(running.splice(0).map((component) => component.stop()));
});
afterAll(async () => {
  await google?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
  if (url) await dropTestDatabase(url);
});

async function until(what: string, condition: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function driveInstance(instance: string) {
  const { log, messages } = captureLog("info");
  const scanned: string[] = [];
  const sink: ScanSink = async (requests) => {
    scanned.push(...requests.map((request) => request.path));
    return { items: requests.map((r) => ({ folder: r.path.slice(0, r.path.lastIndexOf("/")), merged: false })) };
  };
  const create = (openStore: () => Promise<DriveStateStore>) =>
    createDriveMonitor({
      connect: (signal) =>
        connectDrive(
          {
            credentials: { kind: "oauth", clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, tokenStore },
            endpoints: { apiRootUrl: google.url, tokenUrl: google.tokenUrl, authUrl: google.authUrl },
            scopeNeeds: { sharedDrives: false },
            clock: systemClock,
            log,
          },
          signal,
        ),
      openStore,
      sink,
      isInLibrary: async () => false,
      mapper: createPathMapper({ mappings: { "/data/Media/": ["My Drive/Media/"] } }),
      filter: { filePaths: ["My Drive/Media/"], fileExtensions: true, fileExtensionsList: ["mkv"], mimeTypes: false, mimeTypesList: [] },
      pollIntervalMs: 30,
      sharedDrives: [],
      showCacheLogs: false,
      log,
      access: "OAuth token (test)",
    });
  const monitor = driveMonitorByRole({ lock: { url, instance, log, retryMs: 50, checkMs: 50 }, create });
  running.push(monitor);
  return { monitor, scanned, messages };
}

describeWithPostgres("the Drive monitor by role", () => {
  it("polls on one instance; the other stands by, refuses commands, and takes over from the stored page token", async () => {
    const a = driveInstance("host-a-1-aaaa");
    await a.monitor.start();
    await until("a polling", () => a.monitor.role() === "active" && a.monitor.status().lastPoll?.ok === true);
    google.drive.addFile("One (2024).mkv", google.drive.ensureFolders("Media/Movies/One (2024)"));
    await until("a to queue the file", () => a.scanned.length === 1);

    const b = driveInstance("host-b-2-bbbb");
    await b.monitor.start();
    await until("b standby", () => b.monitor.status().state === "standby" && b.monitor.status().activeInstance === "host-a-1-aaaa");
    expect(b.monitor.role()).toBe("standby");
    expect(b.monitor.status().access).toBe("OAuth token (test)");
    await expect(b.monitor.resetPageTokens()).rejects.toThrow(RoleStandbyError);
    await expect(b.monitor.clearCache()).rejects.toThrow("Instance host-a-1-aaaa polls Google Drive; this instance (host-b-2-bbbb) stands by.");

    await a.monitor.stop();
    expect(a.monitor.role()).toBe("standby");
    google.drive.addFile("Two (2025).mkv", google.drive.ensureFolders("Media/Movies/Two (2025)"));
    await until("b to queue the file a did not see", () => b.scanned.length === 1);
    expect(b.scanned).toEqual(["/data/Media/Movies/Two (2025)/Two (2025).mkv"]);
    expect(a.scanned).toEqual(["/data/Media/Movies/One (2024)/One (2024).mkv"]);
    // B went on from A's page token: it did not start "from now on".
    expect(b.messages().some((m) => m.includes("from now on"))).toBe(false);
    expect(b.messages()).toContain("This instance now polls Google Drive (instance host-a-1-aaaa stopped).");
    await until("b's monitor to say running (after its first poll)", () => b.monitor.status().state === "running");

    // B's lock connection dies (a database restart, a network cut): its monitor stops at once; B takes the free role
    // again with a fresh monitor, which goes on from the stored page token.
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query("SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity WHERE application_name = 'autoscan host-b-2-bbbb drive'");
    await admin.end();
    await until("b to lose the role", () => b.messages().some((m) => m.startsWith("This instance lost the drive role")));
    await until("b polling again", () => b.monitor.role() === "active" && b.monitor.status().lastPoll?.ok === true);
    google.drive.addFile("Three (2026).mkv", google.drive.ensureFolders("Media/Movies/Three (2026)"));
    await until("b to queue the third file", () => b.scanned.length === 2);
    expect(b.scanned[1]).toBe("/data/Media/Movies/Three (2026)/Three (2026).mkv");
    expect(b.messages().some((m) => m.includes("from now on"))).toBe(false);
    expect(await b.monitor.resetPageTokens()).toBe("Google Drive page tokens were reset.");
  });
});

interface Row {
  readonly id: number;
  readonly date: number;
  readonly path: string;
}

describeWithPostgres("the backfill by role", () => {
  it("reads on one instance; the other stands by, refuses cmd=backfill, and takes over from the stored cursor", async () => {
    const history: Row[] = [{ id: 1, date: Date.parse("2026-11-25T08:00:00Z"), path: "/tv/Show/S01E01.mkv" }];
    const pages = {
      historyPage: async (page: number, pageSize: number) => {
        const newestFirst = [...history].sort((x, y) => y.date - x.date || y.id - x.id);
        return { totalRecords: newestFirst.length, records: newestFirst.slice((page - 1) * pageSize, page * pageSize) };
      },
    };
    const app: BackfillApp<Row> = {
      name: "sonarr",
      pages,
      toRequests: (row) => [{ path: row.path, kind: "file", source: "Sonarr", event: "Download" }],
      classify: () => "other",
    };
    const instance = (id: string) => {
      const { log, messages } = captureLog("info");
      const queued: ScanRequest[] = [];
      const create = async (cursors: CursorStore) =>
        createBackfill({
          apps: [app],
          cursors,
          sink: async (requests) => {
            queued.push(...requests);
            return { items: requests.map((r) => ({ folder: r.path, merged: false })) };
          },
          isCovered: async () => false,
          clock: systemClock,
          log,
          intervalMs: 30,
        });
      const backfill = backfillByRole({ lock: { url, instance: id, log, retryMs: 50, checkMs: 50 }, apps: ["sonarr"], create });
      running.push(backfill);
      return { backfill, queued, messages };
    };

    const a = instance("host-a-1-aaaa");
    a.backfill.start();
    await until("a's first read", () => a.backfill.status()[0]?.cursor?.id === 1);
    const b = instance("host-b-2-bbbb");
    b.backfill.start();
    await until("b standby", () => b.backfill.status()[0]?.activeInstance === "host-a-1-aaaa");
    expect(b.backfill.status()).toEqual([{ name: "sonarr", state: "standby", activeInstance: "host-a-1-aaaa" }]);
    await expect(b.backfill.run()).rejects.toThrow("Instance host-a-1-aaaa reads the *arr history; this instance (host-b-2-bbbb) stands by.");

    await a.backfill.stop();
    history.push({ id: 2, date: Date.parse("2026-11-25T09:00:00Z"), path: "/tv/Show/S01E02.mkv" });
    await until("b to read what came after a's cursor", () => b.queued.length === 1);
    expect(b.queued.map((r) => r.path)).toEqual(["/tv/Show/S01E02.mkv"]);
    expect(a.queued).toEqual([]);
    expect(b.messages().some((m) => m.includes("from now on"))).toBe(false);
    expect(b.backfill.role()).toBe("active");
    await until("b's cursor", () => b.backfill.status()[0]?.cursor?.id === 2);
  });
});
