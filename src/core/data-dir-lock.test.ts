// @module-tag process
import { afterEach, describe, expect, it } from "vitest";
import { spawn, type ChildProcess } from "node:child_process";
import { readFile, readlink, rm, utimes, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { captureLog, makeTempDir } from "../../test/support/capture-log.ts";
import { acquireDataDirLock } from "./data-dir-lock.ts";
import { FatalError } from "./errors.ts";

let temp: Awaited<ReturnType<typeof makeTempDir>> | undefined;
let other: ChildProcess | undefined;
afterEach(async () => {
  other?.kill("SIGKILL");
  await temp?.cleanup();
});

const here = async (): Promise<{ pidns: string; boot: string }> => ({
  pidns: await readlink("/proc/self/ns/pid"),
  boot: (await readFile("/proc/sys/kernel/random/boot_id", "utf8")).trim(),
});

/** A lock file as another live process on this host (same PID namespace) would leave it. */
async function lockedByAnother(dir: string): Promise<number> {
  other = spawn("sleep", ["30"], { stdio: "ignore" });
  const pid = other.pid ?? -1;
  const owner = { pid, host: hostname(), ...(await here()), started: "2026-11-25T00:00:00.000Z", token: "other" };
  await writeFile(join(dir, "autoscan.lock"), `${JSON.stringify(owner)}\n`);
  return pid;
}

/** A lock written by an autoscan in another PID namespace (another container with the same host name). */
async function lockedFromAnotherNamespace(dir: string, pid: number): Promise<string> {
  const owner = { pid, host: hostname(), pidns: "pid:[1]", boot: (await here()).boot, started: "2026-11-25T00:00:00.000Z", token: "ns" };
  const file = join(dir, "autoscan.lock");
  await writeFile(file, `${JSON.stringify(owner)}\n`);
  return file;
}

const eventually = async (check: () => Promise<boolean>): Promise<void> => {
  for (let i = 0; i < 200 && !(await check()); i++) await new Promise((resolve) => setTimeout(resolve, 10));
};

describe("the data directory lock", () => {
  it("refuses a second autoscan, naming the one that holds the folder", async () => {
    temp = await makeTempDir();
    const pid = await lockedByAnother(temp.dir);
    const logs = captureLog();
    const attempt = acquireDataDirLock({ dir: temp.dir, log: logs.log });
    await expect(attempt).rejects.toBeInstanceOf(FatalError);
    await expect(acquireDataDirLock({ dir: temp.dir, log: logs.log })).rejects.toThrow(
      new RegExp(`in use by another autoscan \\(pid ${String(pid)} on host '${hostname()}'`),
    );
  });

  it("takes over the lock of a process that is gone, and says so", async () => {
    temp = await makeTempDir();
    const pid = await lockedByAnother(temp.dir);
    other?.kill("SIGKILL");
    await new Promise((resolve) => other?.once("exit", resolve));
    const logs = captureLog();
    const lock = await acquireDataDirLock({ dir: temp.dir, log: logs.log });
    expect(logs.messages().some((m) => m.includes(`Took over the data directory lock of autoscan pid ${String(pid)}`))).toBe(true);
    expect(JSON.parse(await readFile(lock.file, "utf8"))).toMatchObject({ pid: process.pid });
    await lock.release();
  });

  it.each([
    ["our own pid", process.pid],
    ["a pid no process has here", 2 ** 22 - 3],
  ])("a fresh lock from another PID namespace with %s is not taken over: only its heartbeat's age counts", async (_, pid) => {
    temp = await makeTempDir();
    await lockedFromAnotherNamespace(temp.dir, pid);
    const logs = captureLog();
    await expect(acquireDataDirLock({ dir: temp.dir, log: logs.log })).rejects.toThrow(/another container or PID namespace/);
  });

  it("a lock from another PID namespace whose heartbeat stopped longer than the stale time ago is taken over", async () => {
    temp = await makeTempDir();
    const file = await lockedFromAnotherNamespace(temp.dir, 1);
    const old = new Date(Date.now() - 120_000);
    await utimes(file, old, old);
    const logs = captureLog();
    const lock = await acquireDataDirLock({ dir: temp.dir, log: logs.log });
    expect(JSON.parse(await readFile(lock.file, "utf8"))).toMatchObject({ pid: process.pid, pidns: (await here()).pidns });
    await lock.release();
  });

  it("writes the lock again when the folder is emptied under it, and removes it on release", async () => {
    temp = await makeTempDir();
    const logs = captureLog();
    const lock = await acquireDataDirLock({ dir: temp.dir, log: logs.log, heartbeatMs: 20 });
    await rm(lock.file);
    const present = (): Promise<boolean> => readFile(lock.file).then(() => true, () => false);
    await eventually(present);
    expect(await present()).toBe(true);
    expect(logs.messages().some((m) => m.includes("was missing while autoscan was running"))).toBe(true);
    await lock.release();
    expect(await present()).toBe(false);
  });
});
