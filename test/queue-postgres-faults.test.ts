import pg from "pg";
import { afterEach, beforeEach, expect, it } from "vitest";
import { StoreUnavailableError } from "../src/core/errors.ts";
import type { ScanRequest } from "../src/core/scan.ts";
import { AUTOSCAN_LOCKS, FOLDER_LOCKS, LOCKS } from "../src/queue/postgres/locks.ts";
import { createPgScanQueue } from "../src/queue/open-scan-queue.ts";
import { openPgPool } from "../src/queue/postgres/pool.ts";
import { inTransaction } from "../src/queue/postgres/transaction.ts";
import type { ScanQueue } from "../src/queue/scan-queue.ts";
import { captureLog } from "./support/capture-log.ts";
import { createManualClock, type ManualClock } from "./support/manual-clock.ts";
import { findPostgresBin, startPostgresCluster } from "./support/postgres-cluster.ts";
import { createTestDatabase, describeWithPostgres, dropTestDatabase, terminateConnections } from "./support/postgres.ts";
import { describeEachStore } from "./support/queue-adapters.ts";

/**
 * The PostgreSQL queue when the database misbehaves under a running operation: a connection ended in the middle of a
 * transaction, a statement cancelled. The promise: the process never crashes, nothing answered as stored is lost.
 */
const DELAY = 60_000;
const LEASE = 15_000;
const episode = (show: string, n: number): ScanRequest => ({
  path: `/tv/${show}/Season 01/${show} - S01E${String(n).padStart(2, "0")}.mkv`,
  kind: "file",
  source: "Sonarr",
  event: "Download",
});

const until = async (condition: () => Promise<boolean> | boolean, what: string): Promise<void> => {
  for (let i = 0; i < 500; i++) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
};

describeWithPostgres("the PostgreSQL queue when a connection breaks under an operation", () => {
  let url: string;
  let clock: ManualClock;
  const logs = captureLog();
  const open: ScanQueue[] = [];
  const crashes: unknown[] = [];
  const monitor = (error: unknown): void => {
    crashes.push(error);
  };

  beforeEach(async () => {
    url = await createTestDatabase();
    clock = createManualClock();
    logs.records.length = 0;
    crashes.length = 0;
    process.on("uncaughtExceptionMonitor", monitor);
  });
  afterEach(async () => {
    process.off("uncaughtExceptionMonitor", monitor);
    for (const queue of open.splice(0)) await queue.close().catch(() => undefined);
    await dropTestDatabase(url);
  });

  const instance = async (name: string): Promise<ScanQueue> => {
    const queue = await createPgScanQueue({ url, instance: name, leaseMs: LEASE, clock, timeFromClock: true, log: logs.log, scanDelayMs: DELAY });
    open.push(queue);
    return queue;
  };

  /** A connection of the test's own that holds `folder`'s merge lock: a request for it waits inside its transaction. */
  const holdFolder = async (folder: string): Promise<pg.Client> => {
    const blocker = new pg.Client({ connectionString: url });
    blocker.on("error", () => undefined);
    await blocker.connect();
    await blocker.query("SELECT pg_advisory_lock($1, hashtext($2))", [FOLDER_LOCKS, folder]);
    return blocker;
  };
  const waitingOnLock = async (): Promise<boolean> => {
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      const found = await admin.query("SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'");
      return (found.rowCount ?? 0) > 0;
    } finally {
      await admin.end();
    }
  };

  it("answers 'unavailable' and keeps running when the server ends the connection of a write in progress", async () => {
    const queue = await instance("a");
    const blocker = await holdFolder("/tv/One/Season 01");
    const write = queue.enqueue([episode("One", 1)]);
    const outcome = write.then(
      () => "stored",
      (error: unknown) => error,
    );
    await until(waitingOnLock, "the write to wait for the folder lock");
    expect(await terminateConnections(url)).toBeGreaterThan(0);
    expect(await outcome).toBeInstanceOf(StoreUnavailableError);
    await blocker.end().catch(() => undefined);
    // Give the broken socket's events their turn: an 'error' event nobody listens to would end the process here.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(crashes).toEqual([]);
    // The pool replaces the connection: the next request is stored.
    await until(async () => (await queue.enqueue([episode("Two", 1)]).then(() => true, () => false)), "a write to succeed again");
    expect((await queue.listPending()).map((item) => item.folder)).toEqual(["/tv/Two/Season 01"]);
  });

  /** Ends the server connections waiting for a lock (the server restarting under them). */
  const endWaiting = async (): Promise<number> => {
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      const found = await admin.query<{ ok: boolean }>(
        "SELECT pg_terminate_backend(pid, 5000) AS ok FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
      );
      return found.rows.filter((row) => row.ok).length;
    } finally {
      await admin.end();
    }
  };

  it("starts anyway when the server ends the connection that waits for the migration lock", async () => {
    const blocker = new pg.Client({ connectionString: url });
    blocker.on("error", () => undefined);
    await blocker.connect();
    await blocker.query("SELECT pg_advisory_lock($1, $2)", [AUTOSCAN_LOCKS, LOCKS.migrations]);
    const opening = instance("a");
    const opened = opening.then(
      () => "opened",
      (error: unknown) => error,
    );
    await until(waitingOnLock, "the start to wait for the migration lock");
    expect(await endWaiting()).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 200));
    await blocker.end();
    // The start waits for the database (it may be restarting) and tries again.
    expect(await opened).toBe("opened");
    expect(crashes).toEqual([]);
  }, 20_000);

  /** Cancels the statements waiting for a lock (as a statement_timeout does): resolves with how many. */
  const cancelWaiting = async (): Promise<number> => {
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      const found = await admin.query<{ ok: boolean }>(
        "SELECT pg_cancel_backend(pid) AS ok FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
      );
      return found.rows.filter((row) => row.ok).length;
    } finally {
      await admin.end();
    }
  };
  const pendingFolders = async (queue: ScanQueue): Promise<string[]> => (await queue.listPending()).map((item) => item.folder).sort();

  it("a write cancelled on a busy folder (a statement timeout) fails alone; writes for other folders are stored meanwhile", async () => {
    const queue = await instance("a");
    const blocker = await holdFolder("/tv/Busy/Season 01");
    const settle = (write: Promise<unknown>): Promise<unknown> => write.then(() => "stored", (error: unknown) => error);
    // Each write is a transaction of its own: the one waiting on the busy folder holds back nothing else.
    const busy = settle(queue.enqueue([episode("Busy", 1)]));
    await until(waitingOnLock, "the write to wait for the busy folder");
    expect(await settle(queue.enqueue([episode("Other", 1)]))).toBe("stored");
    expect(await cancelWaiting()).toBe(1);
    expect(await busy).toBeInstanceOf(StoreUnavailableError);
    await blocker.end();
    expect(await pendingFolders(queue)).toEqual(["/tv/Other/Season 01"]);
  });

  it("leaves no connection behind when it closes while its listening connection is being opened again", async () => {
    const queue = await instance("a");
    expect(await terminateConnections(url)).toBeGreaterThan(0);
    // The listening connection is opened again 2 s after it was lost; closing first must cancel that.
    await queue.close();
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      const left = await admin.query("SELECT application_name FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()");
      expect(left.rows).toEqual([]);
    } finally {
      await admin.end();
    }
    expect(crashes).toEqual([]);
  });
});

describeEachStore("the history views read alike on both stores", (adapter) => {
  it("finds a folder by 'Path contains' whatever the letters' case (SQLite's LIKE ignores ASCII case; PostgreSQL's does not)", async () => {
    const place = await adapter.place();
    const queue = await place.open({ clock: createManualClock(), log: captureLog().log, scanDelayMs: DELAY });
    try {
      const folder = "/tv/Breaking Bad/Season 01";
      await queue.enqueue([{ path: folder, kind: "folder", source: "Manual", event: "Manual" }]);
      const [item] = await queue.listPending();
      if (!item) throw new Error("not queued");
      await queue.recordCheck(item.id, 1, { kind: "ready", checks: 1, scanFolder: folder, files: [] });
      await queue.recordScan(item.id, 1, "plex", { status: "scanned" }, ["plex"]);
      expect((await queue.listHistory({})).map((i) => [i.folder, i.state])).toEqual([[folder, "done"]]);
      for (const search of ["Breaking Bad", "breaking bad", "BREAKING"]) {
        expect({ search, found: (await queue.listHistory({ search })).map((i) => i.folder) }).toEqual({ search, found: [folder] });
        expect({ search, count: await queue.historyCount({ search }) }).toEqual({ search, count: 1 });
      }
    } finally {
      await queue.close();
      await place.cleanup();
    }
  });
});

describeWithPostgres("the PostgreSQL queue when the database stops answering without closing the connection", () => {
  it("gives up on a statement the server never answers (a frozen server, a silent network cut) instead of waiting for ever", async () => {
    const found = findPostgresBin();
    if (!found.ok) throw new Error(found.reason);
    // A cluster of its own: one of its server processes is frozen (SIGSTOP), as a host that vanished leaves its socket.
    const cluster = await startPostgresCluster(found);
    const pool = openPgPool({ url: cluster.url, log: captureLog().log, applicationName: "faults", max: 1, statementTimeoutMs: 300 });
    let frozen: number | undefined;
    try {
      frozen = (await pool.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]?.pid;
      if (frozen === undefined) throw new Error("no backend pid");
      process.kill(frozen, "SIGSTOP");
      await expect(inTransaction(pool, (client) => client.query("SELECT 1"))).rejects.toBeInstanceOf(StoreUnavailableError);
    } finally {
      if (frozen !== undefined) process.kill(frozen, "SIGCONT");
      await pool.end().catch(() => undefined);
      await cluster.stop();
    }
  }, 30_000);
});
