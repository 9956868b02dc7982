/**
 * A hung mount with a backlog (issue points 1 and 17c), printed, not asserted: 100 folders wait on a second mount,
 * queued first, then 100 folders on a healthy disk. Time until the 100 healthy ones are dispatched (each one's file
 * checked and its scan sent), once with the second mount answering (a tmpfs) and once with it hung (a FUSE mount that
 * never answers), and the ratio. A hung disk should hold its own folders and nothing else: the ratio should stay near
 * 1, with a floor of about one second (`slowMs`: how long the first look under the hung mount runs before the folders
 * behind it stop waiting for it), and the look at the hung mount holds no thread of libuv's pool.
 *
 * Needs root and /dev/fuse (skipped with the reason otherwise).   node bench/hung-mount.ts
 */
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { systemClock } from "../src/core/clock.ts";
import type { ScanRequest } from "../src/core/scan.ts";
import { createDiskProbe } from "../src/paths/disk-probe.ts";
import { createDispatcher } from "../src/queue/dispatch/dispatcher.ts";
import { createScanQueue } from "../src/queue/open-scan-queue.ts";
import { createFakeTarget } from "../test/support/fake-target.ts";
import { cleanupMounts, mountHungFuse, mountTmpfs, probeFuse, umountLazy } from "../test/support/faults/mounts.ts";

const FOLDERS = 100;
const silent = pino({ level: "silent" });

const support = probeFuse();
if (!support.ok) {
  console.log(`hung-mount: skipped (${support.reason})`);
} else {
  const root = await mkdtemp(join(tmpdir(), "autoscan-bench-hung-"));
  try {
    const answering = await run(join(root, "answering"), "answering");
    const hung = await run(join(root, "hung"), "hung");
    console.log(
      `hung mount: ${String(FOLDERS)} healthy folders dispatched in ${ms(answering.elapsed)} beside ${String(FOLDERS)} folders on ` +
        `an answering mount, in ${ms(hung.elapsed)} beside ${String(FOLDERS)} on a hung one (first healthy scan after ` +
        `${ms(hung.first)}): ratio ${(hung.elapsed / answering.elapsed).toFixed(1)}`,
    );
    console.log(
      `hung mount: meanwhile ${String(hung.looksInFlight)} look(s) in flight under the hung mount, ${String(hung.poolBusy)} of ` +
        `libuv's pool threads busy; ${String(hung.waiting)} folder(s) waiting for the mount, none failed (${String(hung.failed)})`,
    );
  } finally {
    cleanupMounts();
    await rm(root, { recursive: true, force: true });
  }
}

interface Figures {
  readonly elapsed: number;
  readonly first: number;
  readonly looksInFlight: number;
  readonly poolBusy: number;
  readonly waiting: number;
  readonly failed: number;
}

async function run(dir: string, mode: "answering" | "hung"): Promise<Figures> {
  const healthy = join(dir, "healthy");
  const other = join(dir, "other");
  for (let n = 0; n < FOLDERS; n++) {
    await mkdir(join(healthy, `Show ${String(n)}`), { recursive: true });
    await writeFile(join(healthy, `Show ${String(n)}`, "e1.mkv"), "");
  }
  let release = (): void => undefined;
  if (mode === "answering") {
    mountTmpfs(other, 16 * 1024 * 1024);
    for (let n = 0; n < FOLDERS; n++) {
      await mkdir(join(other, `Album ${String(n)}`), { recursive: true });
      await writeFile(join(other, `Album ${String(n)}`, "01.flac"), "");
    }
  } else {
    const mount = await mountHungFuse(other);
    release = () => mount.release();
  }
  const probe = createDiskProbe({ log: silent, timeoutMs: 5_000 });
  const queue = await createScanQueue({ file: join(dir, "queue.db"), clock: systemClock, log: silent, scanDelayMs: 0 });
  const request = (path: string): ScanRequest => ({ path, kind: "file", source: "Sonarr", event: "Download" });
  // The other mount's folders first: they are the oldest, so the dispatcher comes to them first.
  await queue.enqueue(Array.from({ length: FOLDERS }, (_, n) => request(`/data/Music/Album ${String(n)}/01.flac`)));
  const plex = createFakeTarget("plex");
  const dispatcher = createDispatcher({
    queue,
    targets: [plex],
    clock: systemClock,
    log: silent,
    localForms: (path) => [path.startsWith("/data/Music/") ? join(other, path.slice("/data/Music/".length)) : join(healthy, path.slice("/data/TV/".length))],
    statPath: probe.stat,
    disk: probe,
    maxFileChecks: 10,
    fileCheckDelayMs: 60_000,
  });
  dispatcher.start();
  const started = performance.now();
  await queue.enqueue(Array.from({ length: FOLDERS }, (_, n) => request(`/data/TV/Show ${String(n)}/e1.mkv`)));
  const healthyScans = (): number => plex.calls.filter((call) => call.folder.startsWith("/data/TV/")).length;
  let first = 0;
  while (healthyScans() < FOLDERS) {
    if (first === 0 && healthyScans() > 0) first = performance.now() - started;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const elapsed = performance.now() - started;
  // Writes of the queue still finishing are not threads held: counted once they are done.
  await new Promise((resolve) => setTimeout(resolve, 500));
  const figures: Figures = {
    elapsed,
    first: first || elapsed,
    looksInFlight: probe.inFlight(),
    poolBusy: await poolThreadsBusy(),
    waiting: dispatcher.activity().waitingForMount.length,
    failed: await queue.historyCount({ state: "failed" }),
  };
  await dispatcher.stop({ timeoutMs: 1_000 });
  release();
  umountLazy(other);
  await queue.close();
  return figures;
}

/** libuv's pool threads of this process busy in the kernel (an idle one waits on a futex for work). */
async function poolThreadsBusy(): Promise<number> {
  let busy = 0;
  for (const task of await readdir("/proc/self/task")) {
    const comm = await readFile(`/proc/self/task/${task}/comm`, "utf8").catch(() => "");
    const wchan = await readFile(`/proc/self/task/${task}/wchan`, "utf8").catch(() => "futex");
    if (comm.trim() === "libuv-worker" && !wchan.startsWith("futex")) busy += 1;
  }
  return busy;
}

function ms(value: number): string {
  return value >= 1000 ? `${(value / 1000).toFixed(2)} s` : `${Math.round(value)} ms`;
}
