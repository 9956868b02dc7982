import { mkdirSync, writeFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { startFakePlex, type FakePlex } from "./support/fake-plex.ts";
import {
  eventually,
  fileOf,
  folderOf,
  health,
  Ledger,
  pendingFolders,
  sendScan,
  startServer,
  type AutoscanServer,
  type ServerSetup,
} from "./support/faults/autoscan-server.ts";
import { describeFaults } from "./support/faults/describe-faults.ts";
import { cleanupMounts, fillDisk, freeSpace, freshDir, mountTmpfs, probeMounts } from "./support/faults/mounts.ts";

/**
 * The whole path end to end (webhook → queue → dispatcher → a fake Plex) on a data disk that fills up, with kill -9
 * and restarts: every folder answered 2xx is scanned exactly once, a refused one never; and what the dispatcher does
 * while the queue cannot record its work.
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


/**
 * Fills the data disk and sends requests (for other folders) until one is refused: from then on the store is in its
 * failed state, whatever slack the log's last page had. Returns the filler to free.
 */
async function fillUntilRefused(server: AutoscanServer, dataDir: string, ledger: Ledger, mediaRoot: string): Promise<string> {
  const filler = fillDisk(dataDir, 0);
  for (let i = 0; i < 50; i++) {
    const outcome = ledger.record(await sendScan(server, mediaRoot, 1000 + ledger.take(), { padding: 900 }));
    if (outcome.status === 503) return filler;
  }
  throw new Error("the full disk never refused a request");
}


describeFaults("faults: end to end through a full disk and kill -9 (fake Plex)", probeMounts(), { concurrent: true }, () => {
  it("every folder answered 2xx is scanned exactly once, no refused folder is ever scanned", async () => {
    const plexMedia = await freshSetup("e2e");
    const media = plexMedia.mediaRoot;
    const plex = await startFakePlex({ sections: [{ key: "1", title: "TV", type: "show", locations: [media] }] });
    plexes.push(plex);
    const dataDir = join(plexMedia.root, "data");
    mountTmpfs(dataDir, 400 * 1024);
    const setup: ServerSetup = {
      ...plexMedia,
      dataDir,
      plexUrl: plex.url,
      plexToken: plex.token,
      scanDelaySeconds: 1,
      // JSON lines: the folder of each dispatch line is a field (see `scansInFlight`).
      // DEBUG: the "now being processed" line marks a scan that was about to be sent (see `scansInFlight`).
      env: { AUTOSCAN_LOG_FORMAT: "json", AUTOSCAN_LOGLEVEL: "DEBUG" },
    };
    const ledger = new Ledger();
    const send = async (server: AutoscanServer, count: number): Promise<void> => {
      for (let i = 0; i < count; i++) {
        const n = ledger.take();
        mkdirSync(folderOf(media, n), { recursive: true });
        writeFileSync(fileOf(media, n), "");
        const outcome = ledger.record(await sendScan(server, media, n, { padding: 200 }));
        if (outcome.status !== "none") expect([200, 503], outcome.body).toContain(outcome.status);
      }
    };
    const incarnations: AutoscanServer[] = [];
    const begin = async (): Promise<AutoscanServer> => {
      const next = await start(setup);
      incarnations.push(next);
      return next;
    };
    let server = await begin();
    await send(server, 6);
    // The disk fills while scans are due and being recorded.
    let filler = fillDisk(dataDir, 4096);
    await send(server, 10);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    await server.kill9();
    freeSpace(filler);
    server = await begin();
    await send(server, 6);
    // Again, and a kill while requests are in flight.
    filler = fillDisk(dataDir, 0);
    const inFlight = Array.from({ length: 4 }, () => {
      const n = ledger.take();
      mkdirSync(folderOf(media, n), { recursive: true });
      writeFileSync(fileOf(media, n), "");
      return sendScan(server, media, n);
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    await server.kill9();
    for (const outcome of await Promise.all(inFlight)) ledger.record(outcome);
    freeSpace(filler);
    server = await begin();
    await send(server, 4);
    expect(ledger.refused.size + ledger.unknown.size, "the disk never refused anything: the case did not test refusals").toBeGreaterThan(0);
    // Everything acknowledged gets scanned (a second or so after it arrived); then nothing more for a while.
    const scanned = (): string[] => plex.scans.map((s) => s.path);
    await eventually(() => [...ledger.acked].every((n) => scanned().includes(folderOf(media, n))), {
      timeoutMs: 30_000,
      what: "every acknowledged folder scanned",
      output: () => `${server.output()}\nscans: ${scanned().join(", ")}`,
    });
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    // A folder whose scan a killed process had started may be scanned again by the next one: the scan cannot be
    // recorded in the same instant it is sent (at least once, by design). Any other second scan is a defect. (A scan
    // whose outcome the full disk refused, without a kill: the test after this one.)
    const inFlightAtKill = new Set(incarnations.filter((i) => i.how()?.signal === "SIGKILL").flatMap((i) => scansInFlight(i.output())));
    const problems = ledger
      .problems(media, scanned())
      .filter((p) => !(/delivered 2 times/.test(p) && inFlightAtKill.has(folderOf(media, Number(/request (\d+)/.exec(p)?.[1])))));
    // On a failure, what each incarnation logged about the folders concerned.
    const concerned = problems.map((p) => /request (\d+)/.exec(p)?.[1]).filter((n) => n !== undefined);
    const story = incarnations
      .map((incarnation, i) => {
        const lines = incarnation
          .output()
          .split("\n")
          .filter((line) => concerned.some((n) => line.includes(`show-${n}/`) || line.includes(`show-${n}"`)))
          .map((line) => line.slice(0, 400))
          .filter((line, i, all) => i < 3 || !all.slice(0, i).some((earlier) => earlier.replace(/"time":\d+/, "") === line.replace(/"time":\d+/, "")));
        return `--- process ${String(i + 1)} (${JSON.stringify(incarnation.how() ?? "running")}) ---\n${lines.join("\n")}`;
      })
      .join("\n");
    expect(problems, story).toEqual([]);
    expect(server.exited()).toBe(false);
    await server.stop();
    console.info(
      `[faults] end to end: ${JSON.stringify(Object.fromEntries(ledger.statuses))}, ${String(plex.scans.length)} scans, ` +
        `${String(inFlightAtKill.size)} scan(s) started in a process that was killed`,
    );
  }, 90_000);

  it("a scan that Plex took while the disk filled up (its completion could not be recorded) is not scanned again after recovery", async () => {
    const base = await freshSetup("unrecorded");
    const media = base.mediaRoot;
    const plex = await startFakePlex({ sections: [{ key: "1", title: "TV", type: "show", locations: [media] }] });
    plexes.push(plex);
    const dataDir = join(base.root, "data");
    mountTmpfs(dataDir, 400 * 1024);
    const setup: ServerSetup = { ...base, dataDir, plexUrl: plex.url, plexToken: plex.token, scanDelaySeconds: 1, logFile: join(base.root, "autoscan.log") };
    const server = await start(setup);
    // Plex answers slowly: the scan is on its way while the disk fills.
    plex.setDelay(2_500);
    const ledger = new Ledger();
    mkdirSync(folderOf(media, 0), { recursive: true });
    writeFileSync(fileOf(media, 0), "");
    ledger.record(await sendScan(server, media, ledger.take()));
    expect(ledger.acked.size).toBe(1);
    await eventually(() => plex.requests.some((r) => r.path.endsWith("/refresh")), { timeoutMs: 20_000, what: "the scan sent to Plex", output: server.output });
    const filler = await fillUntilRefused(server, dataDir, ledger, join(base.root, "elsewhere"));
    await eventually(() => plex.scans.length === 1, { timeoutMs: 10_000, what: "Plex answered the scan" });
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    plex.setDelay(0);
    freeSpace(filler);
    const freedAt = Date.now();
    await eventually(async () => (await health(server, 5_000)).status === 200, {
      timeoutMs: 12_000,
      what: "/health 200 after space was freed",
      output: () => server.output().split("\n").filter((line) => !/A scan task failed|exists on check/.test(line)).slice(-30).join("\n"),
    });
    console.info(`[faults] unrecorded scan: /health 200 again ${String(Date.now() - freedAt)} ms after the space was freed`);
    await new Promise((resolve) => setTimeout(resolve, 4_000));
    const story = server
      .output()
      .split("\n")
      .filter((line) => /show-0|scan the queue|write again|scan task/.test(line))
      .join("\n");
    expect(plex.scans.map((scan) => scan.path), `Plex was asked to scan the folder again after the queue recovered:\n${story}`).toEqual([folderOf(media, 0)]);
    // And the queue knows it is done: still pending, it would be scanned again later. (The folders the disk was
    // filled with wait for files that never come: they stay pending, and are not what this case is about.)
    const pending = await pendingFolders(server);
    expect(pending.filter((folder) => folder === folderOf(media, 0)), `the folder is still pending after its scan:\n${story}`).toEqual([]);
    expect(server.exited()).toBe(false);
    await server.stop();
  }, 60_000);

  it("while the queue cannot write, due folders are not checked over and over (no busy loop, no log flood)", async () => {
    const base = await freshSetup("spin");
    const dataDir = join(base.root, "data");
    mountTmpfs(dataDir, 400 * 1024);
    // Due 3 s after they arrive: the disk is full before their first file check.
    // At DEBUG, where each file check is a line: a check loop would show as thousands of them.
    const setup: ServerSetup = { ...base, dataDir, scanDelaySeconds: 3, logFile: join(base.root, "autoscan.log"), env: { AUTOSCAN_LOGLEVEL: "DEBUG" } };
    const server = await start(setup);
    const ledger = new Ledger();
    for (let n = 0; n < 4; n++) {
      mkdirSync(folderOf(base.mediaRoot, n), { recursive: true });
      writeFileSync(fileOf(base.mediaRoot, n), "");
      ledger.record(await sendScan(server, base.mediaRoot, ledger.take()));
    }
    expect(ledger.acked.size).toBe(4);
    // Full, and the store refusing, before the folders are due: their file checks cannot be recorded.
    const filler = await fillUntilRefused(server, dataDir, ledger, join(base.root, "elsewhere"));
    const countChecks = server.countLines(/exists on check|did not exist on check/);
    const countFailures = server.countLines(/A scan task failed/);
    await new Promise((resolve) => setTimeout(resolve, 6_000));
    const checks = countChecks();
    const failures = countFailures();
    const window = server.output().slice(-1500);
    freeSpace(filler);
    const freedAt = Date.now();
    const recovered = await eventually(async () => (await health(server)).status === 200, { timeoutMs: 60_000, what: "/health 200 after space was freed" }).then(
      () => `${String(Date.now() - freedAt)} ms`,
      (error: unknown) => `not within 60 s (${String(error).slice(0, 200)})`,
    );
    console.info(`[faults] spin test: /health 200 again ${recovered} after the space was freed`);
    console.info(`[faults] disk full, 4 folders due for ~3 s: ${String(checks)} file checks, ${String(failures)} failed tasks logged`);
    // The dispatcher starts nothing while the store cannot write (it could not record the outcome): none or a few
    // checks (those already under way when the disk filled), never a loop.
    expect(server.exited()).toBe(false);
    // Four folders, three seconds: a few checks each at most, not thousands.
    expect(checks + failures, `${String(checks)} file checks and ${String(failures)} "A scan task failed" lines in ~3 s while the disk was full:\n${window}`).toBeLessThan(40);
    await server.stop();
  }, 60_000);
});

/**
 * Folders whose scan a process started ("now being processed") before it was killed. Their outcome may not have
 * reached the queue (the scan is sent before its outcome is stored), so the next process scans them again:
 * at least once across a crash, by design.
 */
function scansInFlight(output: string): string[] {
  const started = new Set<string>();
  for (const line of output.split("\n")) {
    let record: { msg?: string; folder?: string };
    try {
      record = JSON.parse(line) as { msg?: string; folder?: string };
    } catch {
      continue;
    }
    if (record.folder !== undefined && record.msg?.includes("now being processed")) started.add(record.folder);
  }
  return [...started];
}
