import { afterEach, beforeEach, expect, it } from "vitest";
import type { ScanRequest } from "../src/core/scan.ts";
import { pgTx } from "../src/queue/postgres/pg-tx.ts";
import { openPgPool, type PgClient, type PgPool } from "../src/queue/postgres/pool.ts";
import { createPgScanQueue } from "../src/queue/open-scan-queue.ts";
import { retryItem } from "../src/queue/rules/admin.ts";
import { enqueueRequests, moveToFolder, type MergePolicy } from "../src/queue/rules/enqueue.ts";
import type { QueueTx } from "../src/queue/rules/queue-tx.ts";
import { captureLog } from "./support/capture-log.ts";
import { createManualClock } from "./support/manual-clock.ts";
import { createTestDatabase, describeWithPostgres, dropTestDatabase } from "./support/postgres.ts";

/**
 * 17b: every write that takes a folder's lock and an item's row lock takes them in one order (the folder first, as a
 * request does). Two real transactions on the real schema, interleaved at the worst moment: a retry (or a file check's
 * move to the file's folder) has read its item and is about to lock the folder while a request for that folder runs.
 * With the item locked first, PostgreSQL finds a deadlock and aborts one of them (SQLSTATE 40P01); in one order, the
 * second simply waits for the first to commit.
 */
const POLICY: MergePolicy = { delayMs: 60_000, priorities: {} };
const unknownPath: ScanRequest = { path: "/tv/Show/Season 01/Show - S01E01.mkv", kind: "unknown", source: "Manual", event: "Manual" };

describeWithPostgres("PostgreSQL lock order (folder before item)", () => {
  let url: string;
  let pool: PgPool;
  beforeEach(async () => {
    url = await createTestDatabase();
    // The schema, and one waiting item keyed by a path of unknown kind (its own folder).
    const queue = await createPgScanQueue({ url, instance: "setup", leaseMs: 15_000, clock: createManualClock(), timeFromClock: true, log: captureLog().log, scanDelayMs: 60_000 });
    await queue.enqueue([unknownPath]);
    await queue.close();
    pool = openPgPool({ url, log: captureLog().log, applicationName: "lock-order test" });
  });
  afterEach(async () => {
    await pool.end();
    await dropTestDatabase(url);
  });

  /** A transaction of its own on its own connection, as `inTransaction` runs it, but without its deadlock retry. */
  const begin = async (): Promise<{ client: PgClient; tx: QueueTx; pid: number }> => {
    const client = await pool.connect();
    await client.query("BEGIN");
    const pid = (await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]?.pid ?? 0;
    return { client, tx: pgTx(client, Date.now(), "test"), pid };
  };
  const run = async (side: { client: PgClient }, work: () => Promise<unknown>): Promise<void> => {
    try {
      await work();
      await side.client.query("COMMIT");
    } catch (error) {
      await side.client.query("ROLLBACK");
      throw error;
    } finally {
      side.client.release();
    }
  };
  const waitingOnLock = async (pid: number): Promise<boolean> =>
    (await pool.query("SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND wait_event_type = 'Lock'", [pid])).rowCount === 1;

  it.each([
    ["a retry of the folder", (tx: QueueTx, id: number) => retryItem(tx, id, POLICY)],
    ["a file check moving it to the file's folder", (tx: QueueTx, id: number) => moveToFolder(tx, id, "/tv/Show/Season 01", Date.now(), POLICY)],
  ])("%s and a request for the same folder at the same moment: no deadlock", async (_name, write) => {
    const id = (await pool.query<{ id: number }>("SELECT id FROM items")).rows[0]?.id ?? 0;
    const first = await begin();
    const second = await begin();
    // The first write stops right before it locks the folder, having read its item as it does.
    let reached!: () => void;
    const atFolderLock = new Promise<void>((resolve) => (reached = resolve));
    let go!: () => void;
    const gate = new Promise<void>((resolve) => (go = resolve));
    const paused: QueueTx = {
      ...first.tx,
      async lockFolders(folders) {
        reached();
        await gate;
        return first.tx.lockFolders(folders);
      },
    };
    const one = run(first, () => write(paused, id));
    await atFolderLock;
    // The request for the same folder runs now: it locks the folder, then the folder's waiting item.
    const two = run(second, () => enqueueRequests(second.tx, [unknownPath], POLICY));
    let twoDone = false;
    void two.then(
      () => (twoDone = true),
      () => (twoDone = true),
    );
    for (let i = 0; i < 500 && !twoDone && !(await waitingOnLock(second.pid)); i++) await new Promise((resolve) => setTimeout(resolve, 10));
    go();
    const outcomes = await Promise.allSettled([one, two]);
    const failures = outcomes.flatMap((outcome) => (outcome.status === "rejected" ? [String((outcome.reason as Error).message)] : []));
    expect(failures).toEqual([]);
  }, 30_000);
});
