/**
 * Seconds, not minutes, on Jellyfin: the time from a Sonarr webhook to the new episode being visible in Jellyfin, and
 * to autoscan's landed check seeing it there, with and without the TargetedScan plugin. Two real services
 * (`autoscan server`, from the sources) run side by side, each with a fake Plex and a fake Jellyfin
 * (test/support/fake-jellyfin.ts) that models Jellyfin's LibraryMonitorDelay at its default, 60 s (restarted by every
 * Media/Updated, then the nearest folder Jellyfin knows is read again: here the whole library location), and the
 * plugin's `POST /Library/ScanPath` (the item is created before it answers). Settings are the defaults
 * (SERVER_LANDED_SETTLE 90 s, SERVER_SCAN_DELAY 1 s here). Takes about 100 s.
 *
 *   node bench/fastpath.ts
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { CLI_MAIN } from "../test/support/run-cli.ts";
import { startFakeJellyfin, type FakeJellyfin } from "../test/support/fake-jellyfin.ts";
import { JELLYFIN_LIBRARY_MONITOR_DELAY_MS } from "../test/support/fake-library-monitor.ts";
import { startFakePlex, type FakePlex } from "../test/support/fake-plex.ts";
import { freePort } from "../test/support/free-port.ts";

const PASS = "0123456789abcdef0123456789abcdef";
const SHOW = "Fast Show (2026)";
const FILE = `Season 01/${SHOW} - S01E01.mkv`;

interface Run {
  readonly name: string;
  readonly visibleMs: number;
  readonly landedMs: number;
  readonly scanPaths: number;
  readonly updates: number;
  readonly reread: readonly string[];
}

const dir = await mkdtemp(join(tmpdir(), "autoscan-bench-fastpath-"));
try {
  const [without, withPlugin] = await Promise.all([run("without the plugin", false), run("with TargetedScan", true)]);
  console.log(`Jellyfin (LibraryMonitorDelay ${String(JELLYFIN_LIBRARY_MONITOR_DELAY_MS / 1000)} s), from the webhook's answer to:`);
  for (const r of [without, withPlugin]) {
    console.log(
      `  ${r.name.padEnd(19)} visible in Jellyfin ${seconds(r.visibleMs)}, landed (autoscan's check saw it) ${seconds(r.landedMs)}; ` +
        `${String(r.scanPaths)} ScanPath, ${String(r.updates)} Media/Updated` +
        (r.reread.length > 0 ? `; Jellyfin re-read ${r.reread.map((p) => `'${p}'`).join(", ")} (the whole library location)` : ""),
    );
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}

async function run(name: string, plugin: boolean): Promise<Run> {
  const home = join(dir, plugin ? "plugin" : "monitor");
  const media = join(home, "media");
  mkdirSync(join(media, "Other Show", "Season 01"), { recursive: true });
  writeFileSync(join(media, "Other Show", "Season 01", "Other Show - S01E01.mkv"), "x");
  const toLocal = (path: string): string | undefined => (path === "/data/TV" || path.startsWith("/data/TV/") ? join(media, path.slice("/data/TV".length)) : undefined);
  const plex = await startFakePlex({ sections: [{ key: "2", title: "TV", type: "show", locations: ["/data/TV"] }], toLocal });
  const jellyfin = await startFakeJellyfin({
    version: "12",
    libraries: [{ name: "Shows", locations: ["/data/TV"] }],
    toLocal,
    targetedScan: { installed: plugin },
    libraryMonitorDelayMs: JELLYFIN_LIBRARY_MONITOR_DELAY_MS,
  });
  jellyfin.library.add("/data/TV/Other Show/Season 01/Other Show - S01E01.mkv");
  const port = await freePort();
  const config = {
    SERVER_PASS: PASS,
    SERVER_PORT: port,
    SERVER_IP: "127.0.0.1",
    PLEX_LOCAL_URL: plex.url,
    PLEX_TOKEN: plex.token,
    PLEX_ANALYZE_TYPE: "off",
    SERVER_SCAN_DELAY: 1,
    SERVER_FILE_CHECK_DELAY: 1,
    SERVER_PATH_MAPPINGS: { "/data/TV/": ["/tv/"] },
    SERVER_FILE_EXIST_PATH_MAPPINGS: { [`${media}/`]: ["/data/TV/"] },
    TARGETS: { jellyfin: { TYPE: "jellyfin", URL: jellyfin.url, TOKEN: jellyfin.key } },
  };
  await writeFile(join(home, "config.json"), JSON.stringify(config, null, 2));
  const child = spawn(process.execPath, [CLI_MAIN, "server", "--config", join(home, "config.json"), "--data-dir", home], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", AUTOSCAN_LOG_FORMAT: "json" },
  });
  const landed = landedLine(child);
  try {
    await ready(port);
    const file = `/data/TV/${SHOW}/${FILE}`;
    mkdirSync(join(media, SHOW, "Season 01"), { recursive: true });
    writeFileSync(join(media, SHOW, FILE), "x");
    const body = JSON.stringify({
      eventType: "Download",
      instanceName: "Sonarr",
      series: { id: 1, title: SHOW, path: `/tv/${SHOW}`, tvdbId: 1, type: "standard" },
      episodes: [{ id: 1, episodeNumber: 1, seasonNumber: 1, title: "Pilot" }],
      episodeFile: { id: 1, relativePath: FILE, quality: "WEBDL-1080p", size: 1 },
      isUpgrade: false,
    });
    const answer = await fetch(`http://127.0.0.1:${String(port)}/${PASS}`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "User-Agent": "Sonarr/4.0.9.2244 (bench)" },
      body,
    });
    if (!answer.ok) throw new Error(`the webhook was answered ${String(answer.status)}`);
    const sent = Date.now();
    const visibleMs = await until(() => jellyfin.library.has(file), 180_000).then(() => Date.now() - sent);
    const landedMs = await landed.then(() => Date.now() - sent);
    return {
      name,
      visibleMs,
      landedMs,
      scanPaths: jellyfin.targetedScan.calls.length,
      updates: jellyfin.updates.length,
      reread: jellyfin.monitor?.validated ?? [],
    };
  } finally {
    await stop(child);
    await close(jellyfin, plex);
  }
}

/** Resolves at the landed check's "Landed:" line for the Jellyfin target. */
function landedLine(child: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    const errors = createInterface({ input: child.stderr! });
    const read = (line: string): void => {
      try {
        const record = JSON.parse(line) as { msg?: string; target?: string };
        if (record.msg?.startsWith("Landed: 'jellyfin'")) resolve();
      } catch {
        // Not a log record.
      }
    };
    lines.on("line", read);
    errors.on("line", read);
    child.once("exit", (code) => reject(new Error(`the server exited (${String(code)}) before the landed check saw the file`)));
  });
}

async function ready(port: number): Promise<void> {
  await until(() => fetch(`http://127.0.0.1:${String(port)}/health`).then((r) => r.ok, () => false), 30_000);
}

async function until(check: () => boolean | Promise<boolean>, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error("timed out");
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  await exited;
}

async function close(jellyfin: FakeJellyfin, plex: FakePlex): Promise<void> {
  await jellyfin.close();
  await plex.close();
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}
