import { afterEach, describe, expect, it } from "vitest";
import { spawn, type ChildProcess } from "node:child_process";
import { readFile, rm, writeFile } from "node:fs/promises";
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

/** A lock file as another live process on this host would leave it. */
async function lockedByAnother(dir: string): Promise<number> {
  other = spawn("sleep", ["30"], { stdio: "ignore" });
  const pid = other.pid ?? -1;
  const owner = { pid, host: hostname(), started: "2026-11-25T00:00:00.000Z", token: "other" };
  await writeFile(join(dir, "autoscan.lock"), `${JSON.stringify(owner)}\n`);
  return pid;
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
