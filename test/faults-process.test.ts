import { mkdirSync } from "node:fs";
import { rm } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { FakePlex } from "./support/fake-plex.ts";
import { eventually, health, Ledger, pendingFolders, sendManual, sendScan, startServer, type AutoscanServer, type ServerSetup } from "./support/faults/autoscan-server.ts";
import { describeFaults } from "./support/faults/describe-faults.ts";
import { cleanupMounts, freshDir, mountHungFuse, probeMounts, probeUnshare, umountLazy } from "./support/faults/mounts.ts";

/**
 * Faults around the process rather than the disk: a second autoscan on the same data directory, a stale lock left by
 * a SIGKILLed one, and a media mount whose `stat` never returns. (End to end through Plex: faults-e2e.test.ts.)
 */
const servers: AutoscanServer[] = [];
const roots: string[] = [];
const plexes: FakePlex[] = [];
afterAll(async () => {
  await Promise.all(servers.map((server) => server.kill9()));
  cleanupMounts();
  await Promise.all(plexes.map((plex) => plex.close()));
  await Promise.all(roots.map((root) => rm(root, { recursive: true, force: true })));
});

async function freshSetup(name: string, extra: Partial<ServerSetup> = {}): Promise<ServerSetup & { root: string }> {
  const root = await freshDir(`autoscan-faults-${name}-`);
  roots.push(root);
  return { root, dataDir: join(root, "data"), configDir: join(root, "config"), mediaRoot: join(root, "media"), ...extra };
}

async function start(setup: ServerSetup, options: { waitHealthy?: boolean } = {}): Promise<AutoscanServer> {
  return startServer(setup, { ...options, onSpawn: (server) => servers.push(server) });
}

describe.concurrent("faults: two processes on one data directory", () => {
  it("the second refuses to start and names the first (pid, host); a stale lock from a SIGKILLed one is taken over", async () => {
    const setup = await freshSetup("lock");
    const first = await start(setup);
    const second = await start({ ...setup, configDir: join(setup.root, "config2") }, { waitHealthy: false });
    const exit = await second.cli.exited;
    expect(exit.code, second.output()).not.toBe(0);
    expect(exit.code).not.toBeNull();
    expect(second.output()).toContain(`pid ${String(first.pid)}`);
    expect(second.output()).toContain(hostname());
    expect(second.output()).toContain(setup.dataDir);
    // The first one is untouched by the attempt.
    expect((await health(first)).status).toBe(200);

    await first.kill9();
    const third = await start(setup);
    expect(third.output()).toMatch(new RegExp(`Took over the data directory lock of autoscan pid ${String(first.pid)}`));
    expect((await health(third)).status).toBe(200);
    await third.stop();
  }, 40_000);
});

describeFaults("faults: a second autoscan in a PID namespace of its own (another container, same host name)", probeUnshare(), { concurrent: true }, () => {
  it("refuses to start, names the lock and the first owner; the first keeps its queue and loses nothing", async () => {
    const setup = await freshSetup("pidns");
    const first = await start(setup);
    const ledger = new Ledger();
    ledger.record(await sendScan(first, setup.mediaRoot, ledger.take()));
    // The same data directory from a process that cannot see the first one's pid (and may itself be pid 1).
    const second = await start({ ...setup, configDir: join(setup.root, "config2"), wrapper: ["unshare", "--pid", "--fork"] }, { waitHealthy: false });
    const exit = await second.cli.exited;
    expect(exit.code, second.output()).not.toBe(0);
    expect(exit.code).not.toBeNull();
    expect(second.output()).toContain(join(setup.dataDir, "autoscan.lock"));
    expect(second.output()).toContain(`pid ${String(first.pid)}`);
    expect(second.output()).toContain("another container or PID namespace");
    // A few heartbeats later the first one still owns its queue: nothing replaced it, nothing took the lock.
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    ledger.record(await sendScan(first, setup.mediaRoot, ledger.take()));
    expect([...ledger.acked].length, JSON.stringify([...ledger.refused])).toBe(2);
    expect(first.output()).not.toMatch(/was replaced while autoscan was running|has taken over the data directory/);
    expect((await pendingFolders(first)).length).toBe(2);
    await first.stop();
  }, 40_000);
});

describeFaults("faults: a media mount whose stat never returns (hung FUSE)", probeMounts(), { concurrent: true }, () => {
  it("with folders due under the hung mount, webhooks elsewhere are answered 200 promptly and /health stays 200", async ({ skip }) => {
    const setup = await freshSetup("hung", { scanDelaySeconds: 1 });
    const hungDir = join(setup.root, "hung");
    let mount;
    try {
      mount = await mountHungFuse(hungDir);
    } catch (error) {
      // The machine refused the FUSE mount (no /dev/fuse, no permission): loudly skipped, never passed.
      console.warn(`\n*** SKIPPED fault case "hung FUSE": ${String(error)} ***\n`);
      return skip(String(error));
    }
    const elsewhere = join(setup.root, "media");
    mkdirSync(elsewhere, { recursive: true });
    const server = await start(setup);
    try {
      const ledger = new Ledger();
      // Six folders under the hung mount: due after a second, their file checks stat the hung mount.
      for (let n = 0; n < 6; n++) ledger.record(await sendScan(server, hungDir, ledger.take(), { timeoutMs: 10_000 }));
      expect([...ledger.acked].length, JSON.stringify([...ledger.refused])).toBe(6);
      // Manual requests of unknown kind under the hung mount: stored and answered first, looked up on disk only
      // afterwards, so the hang never holds their answer up (below the stat's 5 s timeout even on a busy machine).
      const manualStarted = Date.now();
      const manual = [sendManual(server, join(hungDir, "show-manual-1"), 20_000), sendManual(server, join(hungDir, "show-manual-2"), 20_000)];
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      // Requests for folders elsewhere: answered 200 well inside the 30 s request timeout.
      const began = Date.now();
      const elsewhereLedger = new Ledger();
      for (let i = 0; i < 5; i++) {
        const outcome = elsewhereLedger.record(await sendScan(server, elsewhere, 100 + elsewhereLedger.take(), { timeoutMs: 10_000 }));
        expect(outcome.status, `webhook ${String(i)} for a folder elsewhere: ${"error" in outcome ? outcome.error : outcome.body}`).toBe(200);
      }
      const elapsed = Date.now() - began;
      const h = await health(server, 5_000).catch((error: unknown) => ({ status: 0, body: { error: String(error) } }));
      expect(h.status, JSON.stringify(h.body)).toBe(200);
      const manualAnswered = await Promise.all(manual.map((sent) => sent.then((outcome) => ({ outcome, ms: Date.now() - manualStarted }))));
      for (const { outcome, ms } of manualAnswered) {
        expect(outcome.status, `manual request under the hung mount: ${"error" in outcome ? outcome.error : outcome.body}`).toBe(200);
        expect(ms, "a manual request under the hung mount waited for the disk").toBeLessThan(4_000);
      }
      expect(server.exited()).toBe(false);
      // The scenario happened: the file checks did reach the hung mount, and the log names it.
      expect(server.output(), "no log line names the hung mount: did any file check reach it?").toContain(hungDir);
      console.info(`[faults] hung mount: 5 webhooks elsewhere answered in ${String(elapsed)} ms`);
    } finally {
      mount.release();
      umountLazy(hungDir);
    }
    // Once the mount is gone (ENOTCONN, then an empty folder) the process is still fine.
    await eventually(async () => (await health(server)).status === 200, { what: "/health 200 after the mount is gone", output: server.output });
    expect(server.exited()).toBe(false);
    await server.stop();
  }, 60_000);
});
