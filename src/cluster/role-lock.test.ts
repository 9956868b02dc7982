// @module-tag process
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { captureLog } from "../../test/support/capture-log.ts";
import { createTestDatabase, describeWithPostgres, dropTestDatabase } from "../../test/support/postgres.ts";
import { migratePostgres } from "../queue/postgres/migrate.ts";
import { pgMigrations } from "../queue/postgres/migrations/index.ts";
import { openPgPool } from "../queue/postgres/pool.ts";
import { createRoleLock, type HeldRole, type RoleLock } from "./role-lock.ts";
import { applicationName, instanceOf } from "./role-names.ts";

/**
 * The role lock against the test run's real PostgreSQL: one holder among instances, a holder whose connection dies is
 * replaced (and told it lost the role), a stop hands the role over, and a SIGKILLed holder's role is taken over.
 * Waits are bounded poll loops on the state, never timing assertions.
 */
let url: string;
const locks: RoleLock[] = [];

beforeAll(async () => {
  url = await createTestDatabase();
  const { log } = captureLog("fatal");
  const pool = openPgPool({ url, log, applicationName: "autoscan test" });
  await migratePostgres(pool, pgMigrations, log);
  await pool.end();
});
afterEach(async () => {
  await Promise.all(locks.splice(0).map((lock) => lock.stop()));
});
afterAll(async () => {
  if (url) await dropTestDatabase(url);
});

interface Probe {
  readonly lock: RoleLock;
  readonly acquired: HeldRole[];
  lost: number;
  readonly messages: () => string[];
}

function makeLock(instance: string, retryMs: number, role: "drive" | "backfill" = "drive"): Probe {
  const { log, messages } = captureLog("info");
  const probe: Probe = {
    acquired: [],
    lost: 0,
    messages,
    lock: createRoleLock({
      url,
      role,
      instance,
      log,
      retryMs,
      checkMs: 50,
      onAcquired: (held) => void probe.acquired.push(held),
      onLost: () => void probe.lost++,
    }),
  };
  locks.push(probe.lock);
  return probe;
}

async function until(what: string, condition: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Ends the server session of the connection holding the drive role (as a network cut or a killed backend would). */
async function killHolderBackend(): Promise<void> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    const found = await admin.query<{ ended: boolean }>(
      `SELECT pg_terminate_backend(l.pid, 5000) AS ended FROM pg_locks l
        WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2 AND l.classid = 1635087203::bigint::oid AND l.objid = 2::bigint::oid`,
    );
    expect(found.rows).toEqual([{ ended: true }]);
  } finally {
    await admin.end();
  }
}

describeWithPostgres("role lock (PostgreSQL advisory lock)", () => {
  it("lets exactly one of two instances hold a role; the standby knows which", async () => {
    const a = makeLock("host-a-1-aaaa", 50);
    const b = makeLock("host-b-2-bbbb", 50);
    a.lock.start();
    await until("a active", () => a.lock.state() === "active");
    b.lock.start();
    await until("b to see the holder", () => b.lock.lastHolder() === "host-a-1-aaaa");
    expect(b.lock.state()).toBe("standby");
    expect(a.acquired).toHaveLength(1);
    expect(b.acquired).toHaveLength(0);
    expect(await b.lock.holder()).toBe("host-a-1-aaaa");
    expect(a.messages()).toContain("This instance now polls Google Drive (the role was free).");
    expect(b.messages()).toContain("Instance host-a-1-aaaa polls Google Drive; this instance takes over if it stops.");

    // Another role is independent.
    const c = makeLock("host-b-2-bbbb", 50, "backfill");
    c.lock.start();
    await until("c active", () => c.lock.state() === "active");
  });

  it("gives the role to the standby when the holder's connection dies; the holder is told it lost it", async () => {
    // The holder waits long before competing again, so the standby's next try is the one that wins.
    const a = makeLock("host-a-1-aaaa", 60_000);
    const b = makeLock("host-b-2-bbbb", 50);
    a.lock.start();
    await until("a active", () => a.lock.state() === "active");
    b.lock.start();
    await until("b standby", () => b.lock.lastHolder() === "host-a-1-aaaa");

    await killHolderBackend();
    await until("b active", () => b.lock.state() === "active");
    await until("a to be told it lost the role", () => a.lost === 1);
    expect(a.lock.state()).toBe("standby");
    expect(b.acquired).toHaveLength(1);
    expect(a.messages().some((m) => m.startsWith("This instance lost the drive role: its database connection broke"))).toBe(true);
    expect(b.messages()).toContain("This instance now polls Google Drive (instance host-a-1-aaaa stopped).");
    expect(await a.lock.holder()).toBe("host-b-2-bbbb");
  });

  it("hands the role over at stop, after the work stopped: the standby is woken, not left to its next try", async () => {
    const a = makeLock("host-a-1-aaaa", 50);
    const b = makeLock("host-b-2-bbbb", 60_000);
    a.lock.start();
    await until("a active", () => a.lock.state() === "active");
    b.lock.start();
    await until("b standby", () => b.lock.lastHolder() === "host-a-1-aaaa");
    await a.lock.stop();
    expect(a.lost).toBe(1);
    expect(a.lock.state()).toBe("standby");
    await until("b active", () => b.lock.state() === "active");
    expect(a.messages()).toContain("This instance no longer polls Google Drive (stopping); another instance takes over.");
  });

  it("gives the role back when its work cannot start, and takes it again later", async () => {
    const { log } = captureLog("fatal");
    let tries = 0;
    const lock = createRoleLock({
      url,
      role: "backfill",
      instance: "host-c-3-cccc",
      log,
      retryMs: 20,
      checkMs: 50,
      onAcquired: () => {
        tries++;
        if (tries === 1) throw new Error("the database went away for a moment");
      },
      onLost: () => undefined,
    });
    locks.push(lock);
    lock.start();
    await until("the second tenure", () => tries >= 2 && lock.state() === "active");
  });

  it("frees the role of a SIGKILLed holder: the standby takes over", async () => {
    const child = spawn(process.execPath, [fileURLToPath(new URL("../../test/support/role-lock-child.ts", import.meta.url)), url, "host-k-9-kkkk"], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    try {
      let out = "";
      child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
      await until("the child to hold the role", () => out.includes("active"), 15_000);
      const b = makeLock("host-b-2-bbbb", 50);
      b.lock.start();
      await until("b standby", () => b.lock.lastHolder() === "host-k-9-kkkk");
      child.kill("SIGKILL");
      await until("b active", () => b.lock.state() === "active");
      expect(b.messages()).toContain("This instance now polls Google Drive (instance host-k-9-kkkk stopped).");
    } finally {
      child.kill("SIGKILL");
    }
  });
});

it("names connections `autoscan <instance> <role>` and reads the instance back, also when the name is too long", () => {
  expect(applicationName("host-1-abcd", "backfill")).toBe("autoscan host-1-abcd backfill");
  expect(instanceOf("autoscan host-1-abcd backfill")).toBe("host-1-abcd");
  const long = `${"h".repeat(40)}-4194304-abcd`;
  expect(applicationName(long, "backfill")).toBe(`autoscan ${long}`);
  expect(instanceOf(applicationName(long, "drive"))).toBe(long);
  expect(instanceOf("psql")).toBe("psql");
});
