import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createTestDatabase, describeWithPostgres, dropTestDatabase } from "./support/postgres.ts";
import { INSTANCES_PASS, startServiceInstances, type ServiceInstance, type ServiceInstances } from "./support/service-instances.ts";

/**
 * Issue 15's proof: three real autoscan processes on one PostgreSQL database take 2,000 Sonarr webhooks spread across
 * them while one is SIGKILLed in the middle of a scan and another is restarted (a rolling update). Every acknowledged
 * request reaches Plex after its 2xx; no folder is scanned twice except the one scan in flight on the killed instance
 * (taken over by a survivor once its claim lapsed, and counted); only one instance polls Google Drive at any time, and
 * a survivor takes the poller over when its holder dies.
 */
const SHOWS = 80;
const SEASONS = 5;
const EPISODES = 5;
const FOLDERS = SHOWS * SEASONS;
const WEBHOOKS = FOLDERS * EPISODES;
const IN_FLIGHT = 20;
const LEASE_SECONDS = 5;
const POLL_SECONDS = 5;
const SCAN = /^GET \/library\/sections\/[^/]+\/refresh$/;

let url: string | undefined;
let set: ServiceInstances | undefined;

const show = (s: number): string => `Show ${String(s).padStart(2, "0")}`;
const season = (n: number): string => `Season ${String(n).padStart(2, "0")}`;
const episode = (s: number, n: number, e: number): string => `${show(s)} - S${String(n).padStart(2, "0")}E${String(e).padStart(2, "0")}.mkv`;
const folderOf = (s: number, n: number): string => `/data/TV/${show(s)}/${season(n)}`;

function webhookBody(s: number, n: number, e: number): string {
  const id = s * 100 + n * 10 + e;
  return JSON.stringify({
    eventType: "Download",
    instanceName: "Sonarr",
    series: { id: s, title: show(s), path: `/tv/${show(s)}`, tvdbId: 100_000 + s, type: "standard" },
    episodes: [{ id, episodeNumber: e, seasonNumber: n, title: `Episode ${String(e)}` }],
    episodeFile: { id, relativePath: `${season(n)}/${episode(s, n, e)}`, path: `/tv/${show(s)}/${season(n)}/${episode(s, n, e)}`, quality: "WEBDL-1080p" },
    isUpgrade: false,
  });
}

async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, ms: number, every = 100): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > end) throw new Error(`${what}: not within ${String(ms / 1000)} s`);
    await new Promise((resolve) => setTimeout(resolve, every));
  }
}

beforeAll(async () => {
  url = await createTestDatabase();
  set = await startServiceInstances({
    databaseUrl: url,
    names: ["A", "B", "C"],
    config: { SERVER_SCAN_DELAY: 3, SERVER_LEASE_SECONDS: LEASE_SECONDS, SERVER_SCAN_CONCURRENCY: 1 },
    // Plex takes 100–200 ms per scan: every instance has scans in flight.
    scanMs: () => 100 + Math.floor(Math.random() * 100),
    onScan: (instance, path) => scanHook?.(instance, path),
    drive: { pollSeconds: POLL_SECONDS },
  });
  const media = set.media;
  const writes: Promise<void>[] = [];
  for (let s = 0; s < SHOWS; s++) {
    for (let n = 1; n <= SEASONS; n++) {
      const dir = join(media, "TV", show(s), season(n));
      writes.push(
        mkdir(dir, { recursive: true }).then(async () => {
          for (let e = 1; e <= EPISODES; e++) await writeFile(join(dir, episode(s, n, e)), "x");
        }),
      );
    }
  }
  await Promise.all(writes);
  // A first, and holding the Drive poller; then B and C, standing by.
  const [a, b, c] = set.instances as [ServiceInstance, ServiceInstance, ServiceInstance];
  await a.start();
  await until("A to poll Google Drive", async () => (await a.health())?.roles?.drive === "active", 20_000);
  await Promise.all([b.start(), c.start()]);
  await until("B and C to stand by", async () => {
    const [hb, hc] = await Promise.all([b.health(), c.health()]);
    return hb?.roles?.drive === "standby" && hc?.roles?.drive === "standby";
  }, 20_000);
}, 90_000);

afterAll(async () => {
  // AUTOSCAN_DUMP_LOGS=<dir>: every instance's JSON log lines and the scans Plex got, for a look after the run.
  const dump = process.env.AUTOSCAN_DUMP_LOGS;
  if (dump && set) {
    await mkdir(dump, { recursive: true });
    for (const instance of set.instances) await writeFile(join(dump, `${instance.name}.jsonl`), instance.logs().map((line) => JSON.stringify(line)).join("\n"));
    await writeFile(join(dump, "scans.json"), JSON.stringify(set.scans()));
  }
  await set?.close();
  if (url) await dropTestDatabase(url);
}, 60_000);

let scanHook: ((instance: ServiceInstance, path: string) => void) | undefined;

interface Sent {
  readonly folder: string;
  readonly instance: string;
  readonly sentAt: number;
  doneAt: number;
  status: number | "refused";
}

type RoleSample = { at: number; doneAt: number; roles: Record<string, string> };

describeWithPostgres("three instances on one PostgreSQL database", () => {
  it("deliver every acknowledged request through a SIGKILL and a rolling restart, doubling only the killed scan", async () => {
    const all = set!;
    const [a, b, c] = all.instances as [ServiceInstance, ServiceInstance, ServiceInstance];
    const started = Date.now();

    // The Drive role on every instance, every ~100 ms, all three asked at once.
    const samples: RoleSample[] = [];
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const at = Date.now();
        const answers = await Promise.all(all.instances.map((instance) => instance.health()));
        const roles: Record<string, string> = {};
        all.instances.forEach((instance, i) => (roles[instance.name] = answers[i]?.roles?.drive ?? "down"));
        samples.push({ at, doneAt: Date.now(), roles });
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();

    // SIGKILL A when a scan of its reaches Plex once a quarter of the webhooks went out; then restart B.
    let sent = 0;
    let killAt = Number.POSITIVE_INFINITY;
    let inFlightAtKill = -1;
    let killedScan = "";
    scanHook = (instance, path) => {
      if (instance.name !== "A" || sent < WEBHOOKS / 4 || inFlightAtKill >= 0) return;
      inFlightAtKill = instance.plexFront.inFlight(SCAN).length;
      killedScan = path;
      killAt = Date.now();
      instance.process?.kill("SIGKILL");
    };
    let bDown = { from: Number.POSITIVE_INFINITY, to: Number.POSITIVE_INFINITY };
    let restart: Promise<void> | undefined;
    const restartB = async (): Promise<void> => {
      bDown = { from: Date.now(), to: Number.POSITIVE_INFINITY };
      await b.stop();
      await b.start();
      bDown = { ...bDown, to: Date.now() };
    };

    // 2,000 webhooks: 400 season folders × 5 episodes, each folder's five back to back, round-robin over A, B, C,
    // 20 in flight.
    const results: Sent[] = [];
    const folders: [number, number][] = [];
    for (let s = 0; s < SHOWS; s++) for (let n = 1; n <= SEASONS; n++) folders.push([s, n]);
    let next = 0;
    const worker = async (): Promise<void> => {
      for (;;) {
        const index = next++;
        const pick = folders[index];
        if (!pick) return;
        const [s, n] = pick;
        for (let e = 1; e <= EPISODES; e++) {
          // Five in a row cover the three instances: every folder reaches C, which is never down.
          const target = all.instances[(index + e) % all.instances.length]!;
          const entry: Sent = { folder: folderOf(s, n), instance: target.name, sentAt: Date.now(), doneAt: 0, status: "refused" };
          results.push(entry);
          try {
            const res = await fetch(`${target.url}/${INSTANCES_PASS}/sonarr`, {
              method: "POST",
              headers: { "content-type": "application/json" },
              body: webhookBody(s, n, e),
              signal: AbortSignal.timeout(15_000),
            });
            await res.arrayBuffer();
            entry.status = res.status;
          } catch {
            entry.status = "refused";
          }
          entry.doneAt = Date.now();
          sent += 1;
          if (!restart && killAt < Number.POSITIVE_INFINITY && sent >= (WEBHOOKS * 3) / 5) restart = restartB();
        }
      }
    };
    await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
    const sendingEnded = Date.now();
    // A is killed at its first scan after the first quarter (at the latest once dispatch starts); B restarts after it.
    await until("A to be killed during a scan", () => killAt < Number.POSITIVE_INFINITY, 30_000);
    if (!restart) restart = restartB();
    await restart;

    // Answers: 2xx, except to A from its kill on and to B while it was down (refused or 5xx there).
    const overlaps = (entry: Sent, from: number, to: number): boolean => entry.doneAt >= from && entry.sentAt <= to;
    const allowedFailure = (entry: Sent): boolean =>
      (entry.instance === "A" && overlaps(entry, killAt, Number.POSITIVE_INFINITY)) || (entry.instance === "B" && overlaps(entry, bDown.from, bDown.to));
    const acked = results.filter((entry) => typeof entry.status === "number" && entry.status >= 200 && entry.status < 300);
    const failed = results.filter((entry) => !acked.includes(entry));
    const unexpected = failed.filter((entry) => !allowedFailure(entry) || (typeof entry.status === "number" && entry.status < 500));
    expect(unexpected.map((entry) => `${entry.instance} ${String(entry.status)} ${entry.folder}`)).toEqual([]);
    const lastAck = new Map<string, number>();
    for (const entry of acked) lastAck.set(entry.folder, Math.max(lastAck.get(entry.folder) ?? 0, entry.doneAt));

    // Every acknowledged request's folder reaches Plex after its 2xx, and the queue empties.
    const scannedAfter = (folder: string, at: number): boolean => all.scans().some((scan) => scan.path === folder && scan.at >= at);
    await until(
      "every acknowledged folder scanned after its last 2xx, and nothing left in the queue",
      async () => {
        if (![...lastAck].every(([folder, at]) => scannedAfter(folder, at))) return false;
        const answer = await fetch(`${c.url}/api/${INSTANCES_PASS}?cmd=queue_count`).then((r) => r.json() as Promise<{ queue_count?: number }>, () => ({}));
        return (answer as { queue_count?: number }).queue_count === 0;
      },
      60_000,
      250,
    );
    const delivered = Date.now();
    for (const entry of acked) expect(scannedAfter(entry.folder, entry.doneAt), entry.folder).toBe(true);
    expect(lastAck.size).toBe(FOLDERS);

    // The Drive poller: a survivor took it over after A died.
    const handover = await until(
      "a survivor to poll Google Drive after A died",
      () => samples.find((sample) => sample.at > killAt && (sample.roles.B === "active" || sample.roles.C === "active")),
      (POLL_SECONDS + 10) * 1000,
    );
    sampling = false;
    await sampler;

    // Doubles: folders Plex scanned more than once. A folder that got a request after its first scan began is scanned
    // again by the merge rules of one process (new work): counted apart. Every other double must be a scan that was in
    // flight on A when it died, taken over by a survivor whose log says so.
    const scansOf = new Map<string, number[]>();
    for (const scan of all.scans()) scansOf.set(scan.path, [...(scansOf.get(scan.path) ?? []), scan.at]);
    const lateMerges = [...scansOf].filter(([folder, times]) => (lastAck.get(folder) ?? 0) > Math.min(...times)).map(([folder]) => folder);
    const doubles = [...scansOf].filter(([folder, times]) => times.length > 1 && !lateMerges.includes(folder)).map(([folder]) => folder);
    const survivorsLog = [...b.logs(), ...c.logs()];
    const takeovers = survivorsLog.filter((line) => line.level === "warn" && line.msg.startsWith("Took over '"));
    const fromA = takeovers.filter((line) => line.from === idsOf(a)[0]);
    // Who each takeover was from, as `A#1`, `B#1` (B before its restart), … — a clean stop must leave no claim behind.
    const names = new Map(all.instances.flatMap((instance) => idsOf(instance).map((id, i) => [id, `${instance.name}#${String(i + 1)}`] as const)));
    const takenFrom: Record<string, number> = {};
    for (const line of takeovers) {
      const who = `${names.get(String(line.from)) ?? String(line.from)}${Number(line.unfinished) > 0 ? " (scan in flight)" : ""}`;
      takenFrom[who] = (takenFrom[who] ?? 0) + 1;
    }
    const unfinished = takeovers.filter((line) => Number(line.unfinished) > 0);

    // Never two pollers: the Drive API calls, tagged by the instance that made them, form one unbroken run per process
    // (a process that lost the role never polls again), and no two instances said "active" in two rounds in a row
    // (one round may catch a handover: the old holder answered before it let go, the new one after it took over).
    const runs: string[] = [];
    for (const call of [...all.driveCalls()].sort((x, y) => x.at - y.at)) {
      const tag = `${call.instance}#${String(call.generation)}`;
      if (runs.at(-1) !== tag) runs.push(tag);
    }
    const doubleActive = samples.map((sample) => Object.values(sample.roles).filter((role) => role === "active").length >= 2);

    const refused = failed.length;
    console.log(
      `multi-instance: ${String(acked.length)}/${String(WEBHOOKS)} webhooks acknowledged (${String(refused)} refused: A after its SIGKILL, B while restarting), ` +
        `${String(all.scans().length)} Plex scans for ${String(scansOf.size)} folders, doubles ${String(doubles.length)} (A had ${String(inFlightAtKill)} scan(s) in flight: ${killedScan}), ` +
        `rescans for late requests ${String(lateMerges.length)}, takeovers ${JSON.stringify(takenFrom)}, ` +
        `Drive poller handed over in ${String(handover.at - killAt)} ms (poll interval ${String(POLL_SECONDS)} s; callers ${runs.join(" → ")}), ` +
        `${String(doubleActive.filter(Boolean).length)}/${String(samples.length)} role samples caught a handover; ` +
        `A killed at +${String(killAt - started)} ms, B down +${String(bDown.from - started)}…+${String(bDown.to - started)} ms, ` +
        `sending ended at +${String(sendingEnded - started)} ms, all delivered at +${String(delivered - started)} ms`,
    );

    expect(takeovers.length, `takeovers only from A, the killed instance; they were from ${JSON.stringify(takenFrom)}`).toBe(fromA.length);
    expect(inFlightAtKill).toBeGreaterThanOrEqual(1);
    expect(doubles.length).toBeLessThanOrEqual(unfinished.length);
    expect(doubles.length).toBeLessThanOrEqual(inFlightAtKill);
    for (const folder of doubles) expect(unfinished.map((line) => line.folder), folder).toContain(folder);
    for (const [folder, times] of scansOf) if (!doubles.includes(folder)) expect(times.length, folder).toBeLessThanOrEqual(lateMerges.includes(folder) ? 2 : 1);
    expect(new Set(runs).size, `Drive API callers in order: ${runs.join(" → ")}`).toBe(runs.length);
    expect(runs[0]).toBe("A#1");
    expect(runs.length).toBeGreaterThanOrEqual(2);
    expect(doubleActive.some((both, i) => both && doubleActive[i + 1] === true)).toBe(false);
    // Samples answered in full before the kill (one on its way at the kill may find A gone).
    expect(samples.filter((sample) => sample.doneAt < killAt).every((sample) => sample.roles.A === "active")).toBe(true);
  }, 150_000);
});

/** The instance ids of each process an instance ran, in order (from each start's "Queue in PostgreSQL" line). */
function idsOf(instance: ServiceInstance): string[] {
  return instance
    .logs()
    .filter((entry) => entry.msg.startsWith("Queue in PostgreSQL"))
    .map((entry) => String(entry.instance));
}
