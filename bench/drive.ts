/**
 * The Google Drive monitor against the fake Google (test/support/fake-google.ts), through the real client libraries:
 *
 * 1. Drive API calls per new file with a warm cache (target ≤ 1.2): the library's folders are already cached, then
 *    polls bring new files. Every Drive API call is counted (changes.list, files.get, drives.*, startPageToken).
 * 2. A backlog of 10,000 changes processed in one poll: wall time and the peak RSS of a separate process that runs
 *    only the monitor (the fake Google lives in this process, so its memory is not counted).
 *
 *   node bench/drive.ts
 *   BENCH_BACKLOG=50000 node bench/drive.ts
 */
import { fork } from "node:child_process";
import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { systemClock } from "../src/core/clock.ts";
import type { ScanRequest } from "../src/core/scan.ts";
import { connectDrive } from "../src/drive/credentials.ts";
import { openDriveStateStore } from "../src/drive/drive-store.ts";
import { createDriveMonitor } from "../src/drive/poller.ts";
import { SCOPE_METADATA_READONLY } from "../src/drive/scope.ts";
import { createTokenStore } from "../src/drive/token-store.ts";
import { createPathMapper } from "../src/paths/mapping.ts";
import { CLIENT_ID, CLIENT_SECRET, createDriveHarness } from "../test/support/drive-harness.ts";
import { startFakeGoogle } from "../test/support/fake-google.ts";

const BACKLOG = Number(process.env.BENCH_BACKLOG ?? 10_000);

if (process.argv[2] === "child") await child(process.argv[3] ?? "", process.argv[4] ?? "");
else {
  await warmCache();
  await backlog();
}

async function warmCache(): Promise<void> {
  console.log("Drive API calls per new file, warm cache (My Drive feed; target ≤ 1.2)");
  const h = await createDriveHarness({ filter: { filePaths: ["My Drive/Media/"] } });
  const d = h.google.drive;
  await h.monitor.pollOnce();
  // A library whose folders the monitor already saw (through the feed): 50 shows × 4 seasons, 200 movie folders.
  const seasons: string[] = [];
  for (let s = 0; s < 50; s++) for (let n = 1; n <= 4; n++) seasons.push(d.ensureFolders(`Media/TV/Show ${s}/Season ${n}`));
  const movies = d.ensureFolders("Media/Movies");
  await h.monitor.pollOnce();
  const scenarios: [string, number, (poll: number, i: number) => void][] = [
    ["1 new episode per poll", 1, (poll) => d.addFile(`e${poll}.mkv`, seasons[poll % seasons.length])],
    ["5 new episodes per poll", 5, (poll, i) => d.addFile(`b${poll}-${i}.mkv`, seasons[(poll * 5 + i) % seasons.length])],
    ["1 new movie folder + file per poll", 1, (poll) => d.addFile(`m${poll}.mkv`, d.addFolder(`Movie ${poll} (2024)`, movies))],
    ["1 episode in a new season folder per poll", 1, (poll) => d.addFile(`s${poll}.mkv`, d.addFolder(`Season ${poll + 10}`, d.files.get(seasons[poll]!)!.parents[0]))],
  ];
  for (const [label, perPoll, add] of scenarios) {
    const before = h.scanned().length;
    h.google.resetCalls();
    for (let poll = 0; poll < 40; poll++) {
      for (let i = 0; i < perPoll; i++) add(poll, i);
      await h.monitor.pollOnce();
    }
    const files = h.scanned().length - before;
    const calls = h.google.apiCalls();
    console.log(`  ${label.padEnd(42)} ${files} files, ${calls} calls (files.get ${h.google.calls["files.get"]}) → ${(calls / files).toFixed(2)} calls/file`);
  }
  await h.close();

  const google = await startFakeGoogle();
  const team = google.drive.addSharedDrive("Team");
  const two = await createDriveHarness({
    google,
    sharedDrives: ["Team"],
    filter: { filePaths: ["My Drive/Media/", "Team/"] },
    mappings: { "/data/Media/": ["My Drive/Media/"], "/data/team/": ["Team/"] },
  });
  await two.monitor.pollOnce();
  const folder = google.drive.ensureFolders("TV/Show/Season 1", team);
  await two.monitor.pollOnce();
  two.google.resetCalls();
  for (let poll = 0; poll < 40; poll++) {
    two.google.drive.addFile(`t${poll}.mkv`, folder);
    await two.monitor.pollOnce();
  }
  const calls = two.google.apiCalls();
  console.log(`  ${"My Drive + 1 shared drive, 1 file per poll".padEnd(42)} ${two.scanned().length} files, ${calls} calls (files.get ${two.google.calls["files.get"]}) → ${(calls / two.scanned().length).toFixed(2)} calls/file (1 feed call per drive per poll)`);
  await two.close();
}

async function backlog(): Promise<void> {
  const google = await startFakeGoogle();
  google.addClient(CLIENT_ID, CLIENT_SECRET);
  const dir = await mkdtemp(join(tmpdir(), "autoscan-bench-drive-"));
  await createTokenStore({ path: join(dir, "google-token.json") }).save({
    clientId: CLIENT_ID,
    refreshToken: google.issueRefreshToken(CLIENT_ID, SCOPE_METADATA_READONLY),
  });
  const worker = fork(import.meta.filename, ["child", google.url, dir], { stdio: "inherit" });
  const next = (): Promise<Record<string, number>> => new Promise((resolve) => worker.once("message", (m) => resolve(m as Record<string, number>)));
  await next(); // the monitor took its start page token
  // The backlog: a library arriving at once — one folder per 20 changes, files in the newest folder.
  const d = google.drive;
  const first = Number(d.startPageToken);
  const root = d.ensureFolders("Media/TV");
  let folder = root;
  for (let i = 1; Number(d.startPageToken) - first < BACKLOG; i++) {
    if (i % 20 === 1) folder = d.addFolder(`Show ${i}`, root);
    else d.addFile(`episode ${i}.mkv`, folder);
  }
  const changes = Number(d.startPageToken) - first;
  google.resetCalls();
  worker.send("go");
  const result = await next();
  const db = await stat(join(dir, "cache.db"));
  console.log(`\n${changes} pending changes processed in one poll (pages of 1000), the monitor in its own process:`);
  console.log(`  time ${result.ms?.toFixed(0)} ms (${((BACKLOG / (result.ms ?? 1)) * 1000).toFixed(0)} changes/s), ${result.scanned} scan requests`);
  console.log(`  RSS before ${mb(result.rssBefore)} MB, peak ${mb(result.rssPeak)} MB, heap used after ${mb(result.heapAfter)} MB`);
  console.log(`  Drive API calls ${google.apiCalls()} (changes.list ${google.calls.changes}, files.get ${google.calls["files.get"]}); cache.db ${mb(db.size)} MB`);
  await google.close();
  await rm(dir, { recursive: true, force: true });
}

async function child(url: string, dir: string): Promise<void> {
  const log = pino({ level: "silent" });
  const scanned: ScanRequest[] = [];
  const monitor = createDriveMonitor({
    connect: (signal) =>
      connectDrive(
        {
          credentials: { kind: "oauth", clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, tokenStore: createTokenStore({ path: join(dir, "google-token.json") }) },
          endpoints: { apiRootUrl: url, tokenUrl: `${url}token` },
          scopeNeeds: { sharedDrives: false },
          clock: systemClock,
          log,
        },
        signal,
      ),
    openStore: () => openDriveStateStore({ path: join(dir, "cache.db"), log }),
    sink: async (requests) => {
      scanned.push(...requests);
      return { items: requests.map((r) => ({ folder: r.path, merged: false })) };
    },
    isInLibrary: async () => false,
    mapper: createPathMapper({ mappings: { "/data/Media/": ["My Drive/Media/"] } }),
    filter: { filePaths: ["My Drive/Media/"], fileExtensions: true, fileExtensionsList: ["mkv"], mimeTypes: false, mimeTypesList: [] },
    pollIntervalMs: 60_000,
    sharedDrives: [],
    showCacheLogs: false,
    log,
  });
  await monitor.pollOnce();
  process.send?.({});
  await new Promise<void>((resolve) => process.once("message", () => resolve()));
  const rssBefore = process.memoryUsage().rss;
  let rssPeak = rssBefore;
  const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, process.memoryUsage().rss)), 5);
  const start = performance.now();
  await monitor.pollOnce();
  const ms = performance.now() - start;
  clearInterval(sampler);
  rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
  process.send?.({ ms, rssBefore, rssPeak, heapAfter: process.memoryUsage().heapUsed, scanned: scanned.length }, () => process.exit(0));
}

function mb(bytes: number | undefined): string {
  return ((bytes ?? 0) / 1024 / 1024).toFixed(1);
}
