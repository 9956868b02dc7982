import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { health, Ledger, pendingFolders, sendScan, type ServerSetup } from "./support/faults/autoscan-server.ts";
import { describeFaults } from "./support/faults/describe-faults.ts";
import {
  caseRoot,
  cleanupCases,
  expectAlive,
  expectHealth,
  MEDIA,
  restartAndCheck,
  sendAccepted,
  sendUntilRefused,
  start,
} from "./support/faults/disk-cases.ts";
import { makeLoopDisk, mountFaultyFuse, probeFuse, probeLoopDevices } from "./support/faults/mounts.ts";

/**
 * The real `autoscan server` on data directories whose device fails through the kernel: ext4 on a loop device that
 * answers EIO, or that the kernel turns read-only after an error; and a FUSE file system served by the test that
 * refuses folder fsync (EPERM), fails fsync (EIO) or turns read-only while autoscan holds its files open. The same
 * checks as faults-disk.test.ts: 2xx kept, refusals never delivered, /health truthful, recovery without a restart.
 */
afterAll(cleanupCases);

async function deviceSetup(root: string, dataParent: string): Promise<ServerSetup> {
  return { dataDir: join(dataParent, "data"), configDir: join(root, "config"), mediaRoot: MEDIA, logFile: join(root, "autoscan.log") };
}

describeFaults("faults: a failing block device (ext4 on a loop device)", probeLoopDevices(), { concurrent: true }, () => {
  it("EIO on fsync: 503 while the disk fails, /health 503, recovery once it answers again, nothing acknowledged lost", async () => {
    const root = await caseRoot("eio");
    const disk = makeLoopDisk(root, "continue");
    const setup = await deviceSetup(root, disk.dir);
    let server = await start(setup);
    const ledger = new Ledger();
    await sendAccepted(server, ledger, 3);
    disk.breakDisk();
    const refusal = await sendUntilRefused(server, ledger, { max: 10, refusals: 2 });
    expect(refusal, "no request was refused while every write to the disk failed").toBeDefined();
    expect(refusal).toMatch(/I\/O error/i);
    const h = await health(server);
    expect(h.status).toBe(503);
    expect(JSON.stringify(h.body)).toMatch(/I\/O error/i);
    // Still refused after the background probe tried again.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect((await health(server)).status).toBe(503);
    expectAlive(server);
    disk.healDisk();
    await expectHealth(server, 200, "/health 200 once the disk answers again (no restart)");
    await sendAccepted(server, ledger, 3);
    expectAlive(server);
    server = await restartAndCheck(server, setup, ledger);
    expect(server.output()).not.toMatch(/are missing/);
    await server.stop();
  }, 60_000);

  it("the kernel turns the filesystem read-only under load (ext4 errors=remount-ro): 503, /health 503, recovery after the admin mounts it again", async () => {
    const root = await caseRoot("ro-kernel");
    const disk = makeLoopDisk(root, "remount-ro");
    const setup = await deviceSetup(root, disk.dir);
    let server = await start(setup);
    const ledger = new Ledger();
    await sendAccepted(server, ledger, 3);
    // Concurrent requests while the filesystem fails under them: each must be stored (2xx) or refused (503).
    const inFlight = Array.from({ length: 6 }, () => sendScan(server, MEDIA, ledger.take()));
    disk.failFilesystem();
    for (const outcome of await Promise.all(inFlight)) expect([200, 503]).toContain(ledger.record(outcome).status);
    const refusal = await sendUntilRefused(server, ledger, { max: 5, refusals: 2 });
    expect(refusal).toMatch(/read-only/i);
    const h = await health(server);
    expect(h.status).toBe(503);
    expect(JSON.stringify(h.body)).toMatch(/read-only/i);
    expectAlive(server);
    // The admin's repair: autoscan must not hold files open there, or the unmount stays busy.
    await disk.remountFresh();
    await expectHealth(server, 200, "/health 200 once the filesystem is mounted again (no restart)");
    await sendAccepted(server, ledger, 3);
    expectAlive(server);
    server = await restartAndCheck(server, setup, ledger);
    await server.stop();
  }, 60_000);
});

describeFaults("faults: a FUSE data directory (served by the test, answers through the kernel)", probeFuse(), { concurrent: true }, () => {
  async function fuseSetup(name: string) {
    const root = await caseRoot(name);
    const fuse = await mountFaultyFuse(join(root, "backing"), join(root, "mnt"));
    return { setup: await deviceSetup(root, fuse.dir), fuse };
  }

  it("EPERM on folder fsync (as SMB and some FUSE file systems answer): tolerated, warned once, requests 200, nothing lost", async () => {
    const { setup, fuse } = await fuseSetup("eperm-dirsync");
    await fuse.set("fsyncdir EPERM");
    let server = await start(setup);
    const ledger = new Ledger();
    await sendAccepted(server, ledger, 8);
    expect((await health(server)).status).toBe(200);
    const warnings = server.output().split("\n").filter((line) => line.includes("does not support fsync on a folder"));
    expect(warnings.length, server.output().slice(-3000)).toBe(1);
    expect(warnings[0]).toContain("EPERM");
    await server.kill9();
    server = await start(setup);
    await sendAccepted(server, ledger, 3);
    // After a kill -9 and a start on a file system that refuses folder fsync: nothing acknowledged lost.
    server = await restartAndCheck(server, setup, ledger);
    await server.stop();
    fuse.stop();
  }, 60_000);

  it("EIO on fsync of the log (the write went through, the fsync failed): 503, /health 503, recovery, nothing refused comes back", async () => {
    const { setup, fuse } = await fuseSetup("eio-fsync");
    let server = await start(setup);
    const ledger = new Ledger();
    await sendAccepted(server, ledger, 3);
    await fuse.set("fsync EIO");
    expect(await sendUntilRefused(server, ledger, { max: 5, refusals: 2 })).toMatch(/I\/O error/i);
    expect((await health(server)).status).toBe(503);
    // Killed while fsync still fails: the refused requests' bytes reached the file before the fsync failed, and must
    // not come back at the next start.
    await server.kill9();
    await fuse.set("fsync ok");
    server = await start(setup);
    expect(ledger.problems(MEDIA, await pendingFolders(server))).toEqual([]);
    await sendAccepted(server, ledger, 2);
    // Again, this time recovering without a restart.
    await fuse.set("fsync EIO");
    expect(await sendUntilRefused(server, ledger, { max: 5, refusals: 1 })).toMatch(/I\/O error/i);
    expect((await health(server)).status).toBe(503);
    await fuse.set("fsync ok");
    await expectHealth(server, 200, "/health 200 once fsync works again");
    await sendAccepted(server, ledger, 3);
    expectAlive(server);
    server = await restartAndCheck(server, setup, ledger);
    await server.stop();
    fuse.stop();
  }, 60_000);

  it("the share turns read-only while autoscan holds its log open (EROFS on write): 503, /health 503, recovery", async () => {
    const { setup, fuse } = await fuseSetup("erofs");
    let server = await start(setup);
    const ledger = new Ledger();
    await sendAccepted(server, ledger, 3);
    await fuse.set("readonly on");
    expect(await sendUntilRefused(server, ledger, { max: 5, refusals: 2 })).toMatch(/read-only/i);
    const h = await health(server);
    expect(h.status).toBe(503);
    expect(JSON.stringify(h.body)).toMatch(/read-only/i);
    expectAlive(server);
    await fuse.set("readonly off");
    await expectHealth(server, 200, "/health 200 once the share is writable again");
    await sendAccepted(server, ledger, 3);
    server = await restartAndCheck(server, setup, ledger);
    await server.stop();
    fuse.stop();
  }, 60_000);
});
