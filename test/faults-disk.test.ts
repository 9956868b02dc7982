import { existsSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { eventually, health, Ledger, pendingFolders, sendScan, type ServerSetup } from "./support/faults/autoscan-server.ts";
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
  setupOnTmpfs,
  start,
} from "./support/faults/disk-cases.ts";
import { fillDisk, freeBytes, freeSpace, probeMounts, remount } from "./support/faults/mounts.ts";

/**
 * The real `autoscan server` on a data directory whose disk misbehaves for real: a small tmpfs filled up (ENOSPC,
 * and the short writes a nearly full tmpfs gives), remounted read-only, removed while running, a file size limit
 * (EFBIG). For each: every request answered 2xx is in the queue after recovery and after a kill -9 and restart,
 * every request refused is not, `/health` says 503 while the queue cannot write and 200 again without a restart, and
 * the process never dies by itself. (Block-device and FUSE faults: faults-devices.test.ts.)
 */
afterAll(cleanupCases);

describeFaults("faults: the data disk", probeMounts(), { concurrent: true }, () => {
  it("ENOSPC at many fill levels: 503 (never 500) while full, /health 503, recovery without restart, kill -9 and restart lose nothing", async () => {
    const setup = await setupOnTmpfs("enospc");
    let server = await start(setup);
    const ledger = new Ledger();
    await sendAccepted(server, ledger, 3);
    // Fill levels: nothing left, part of a page, a few pages; padding makes records span pages, so the last write
    // before the refusal is a short write (a nearly full tmpfs takes what fits in the pages it has).
    const rounds = [
      { leave: 0, padding: 0, killWhileFull: false },
      { leave: 4096, padding: 300, killWhileFull: true },
      { leave: 2 * 4096, padding: 0, killWhileFull: false },
      { leave: 0, padding: 900, killWhileFull: false },
    ];
    for (const [index, round] of rounds.entries()) {
      const filler = fillDisk(setup.dataDir, round.leave, `filler-${String(index)}.bin`);
      const refusal = await sendUntilRefused(server, ledger, { padding: round.padding });
      expect(refusal, `round ${String(index)}: no request was refused with ${String(freeBytes(setup.dataDir))} bytes free`).toBeDefined();
      expect(refusal).toMatch(/disk full/i);
      const h = await health(server);
      expect(h.status, JSON.stringify(h.body)).toBe(503);
      expect(JSON.stringify(h.body)).toMatch(/disk full/i);
      expectAlive(server);
      if (round.killWhileFull) {
        // Killed while the disk is still full: the refused requests must not come back at the restart.
        await server.kill9();
        freeSpace(filler);
        server = await start(setup);
        expect(ledger.problems(MEDIA, await pendingFolders(server))).toEqual([]);
        // The refused write (a short write, then ENOSPC) was cut back off the log: no torn record at the restart.
        expect(server.output()).not.toMatch(/incomplete record|damaged/);
      } else {
        freeSpace(filler);
        await expectHealth(server, 200, `round ${String(index)}: /health 200 again after space was freed (no restart)`);
      }
      await sendAccepted(server, ledger, 3);
      expectAlive(server);
    }
    expect(ledger.refused.size).toBeGreaterThan(0);
    server = await restartAndCheck(server, setup, ledger);
    expect(server.output()).not.toMatch(/damaged|are missing/);
    await server.stop();
  }, 90_000);

  it("restarts while the disk is still full: starts, answers 503 and /health 503, and recovers when space is freed", async () => {
    const setup = await setupOnTmpfs("enospc-start");
    let server = await start(setup);
    const ledger = new Ledger();
    await sendAccepted(server, ledger, 3);
    await server.kill9();
    const filler = fillDisk(setup.dataDir, 0);
    server = await start(setup, { waitHealthy: false });
    // It should come up and say 503 (a crash loop leaves the senders with refused connections and no /health).
    await eventually(async () => server.exited() || (await health(server)).status === 503, {
      timeoutMs: 20_000,
      what: "the server comes up (503) on a full disk",
      output: server.output,
    });
    expectAlive(server);
    expect(ledger.record(await sendScan(server, MEDIA, ledger.take())).status).toBe(503);
    freeSpace(filler);
    await expectHealth(server, 200, "/health 200 after space was freed");
    await sendAccepted(server, ledger, 2);
    server = await restartAndCheck(server, setup, ledger);
    await server.stop();
  }, 60_000);

  it("a read-only data directory (remount,ro of the tmpfs): webhooks 503 (not 500), /health 503, then recovery after remount,rw", async () => {
    // The log file goes elsewhere: a file open for writing makes the kernel refuse `remount,ro` (EBUSY). The queue's
    // own log is closed after each checkpoint, so right after a start nothing of autoscan's is open there.
    const base = await setupOnTmpfs("readonly");
    const setup = { ...base, logFile: join(base.configDir, "autoscan.log") };
    let server = await start(setup);
    const ledger = new Ledger();
    await sendAccepted(server, ledger, 3);
    server = await restartAndCheck(server, setup, ledger);
    remount(setup.dataDir, "ro");
    const refusal = await sendUntilRefused(server, ledger, { max: 5, refusals: 2 });
    expect(refusal).toMatch(/read-only/i);
    const h = await health(server);
    expect(h.status).toBe(503);
    expect(JSON.stringify(h.body)).toMatch(/read-only/i);
    // Still refused after the background probe tried again (it cannot write either), and the process lives on.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect((await health(server)).status).toBe(503);
    expect(ledger.record(await sendScan(server, MEDIA, ledger.take())).status).toBe(503);
    expectAlive(server);
    remount(setup.dataDir, "rw");
    await expectHealth(server, 200, "/health 200 after remount,rw");
    await sendAccepted(server, ledger, 3);
    server = await restartAndCheck(server, setup, ledger);
    await server.stop();
  }, 60_000);

  it("the data directory removed while running (rm -rf): nothing acknowledged is lost, the queue is written again from memory", async ({ expect }) => {
    const root = await caseRoot("removed");
    const setup: ServerSetup = { dataDir: join(root, "data"), configDir: join(root, "config"), mediaRoot: MEDIA };
    let server = await start(setup);
    const ledger = new Ledger();
    await sendAccepted(server, ledger, 5);
    await rm(setup.dataDir, { recursive: true, force: true });
    expect(existsSync(setup.dataDir)).toBe(false);
    // Requests right after the removal: each is either stored (2xx) or refused (503), never lost after a 2xx.
    for (let i = 0; i < 5; i++) {
      const outcome = ledger.record(await sendScan(server, MEDIA, ledger.take()));
      expect([200, 503], "body" in outcome ? outcome.body : outcome.error).toContain(outcome.status);
    }
    await expectHealth(server, 200, "/health 200 once the queue is written again");
    await eventually(() => existsSync(join(setup.dataDir, "queue.db")), { timeoutMs: 15_000, what: "queue.db written again", output: server.output });
    await sendAccepted(server, ledger, 3);
    expectAlive(server);
    // The data directory lock went with the folder: it must come back (the lock's heartbeat, every 10 s), or a
    // second autoscan can start on the same queue while this one runs. Soft, so the data check below still runs.
    const lockBack = await eventually(() => existsSync(join(setup.dataDir, "autoscan.lock")), { timeoutMs: 15_000, what: "autoscan.lock back" }).then(
      () => true,
      () => false,
    );
    expect.soft(lockBack, "autoscan.lock was not written again within 15 s after the data directory was removed").toBe(true);
    server = await restartAndCheck(server, setup, ledger);
    await server.stop();
  }, 60_000);

  it("EFBIG (ulimit -f): SIGXFSZ does not kill the process, requests past the limit get 503, the queue recovers by itself", async () => {
    const root = await caseRoot("efbig");
    // The log reaches the limit first; the recovery's snapshot holds the same rows plus a few pages of schema, so
    // the limit is large enough that those pages do not outweigh what the log carried.
    const setup: ServerSetup = { dataDir: join(root, "data"), configDir: join(root, "config"), mediaRoot: MEDIA, fileSizeLimitKiB: 320 };
    let server = await start(setup);
    const ledger = new Ledger();
    const refusal = await sendUntilRefused(server, ledger, { padding: 600, refusals: 1, max: 600 });
    expectAlive(server);
    expect(refusal, `no refusal after ${String(ledger.acked.size)} requests`).toBeDefined();
    expect(refusal).toMatch(/file size limit/i);
    await expectHealth(server, 200, "/health 200 again once a fresh log generation is started");
    await sendAccepted(server, ledger, 3);
    expectAlive(server);
    server = await restartAndCheck(server, setup, ledger);
    await server.stop();
  }, 60_000);
});
