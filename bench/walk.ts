/**
 * The walk (issue "The queue, written once"): which of autoscan's source files one Sonarr webhook runs through, from
 * its route to the Plex call. A real `autoscan server` (the .ts sources) with V8's precise coverage switched on by a
 * preload (bench/support/coverage-preload.mjs), a fake Plex and the episode on disk. One webhook first warms
 * everything up (the section list is read, the timers have run); the coverage is then reset, a second webhook for
 * another show is sent and followed until Plex is asked to scan its season; what ran in between is listed, by
 * folder, with how many of each file's functions ran. Timers that run anyway (the dispatch loop's wake-ups) are in
 * the list too: they are part of the way.
 *
 *   node bench/walk.ts
 */
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { startFakePlex } from "../test/support/fake-plex.ts";
import { freePort } from "../test/support/free-port.ts";
import { childEnv, CLI_MAIN } from "../test/support/run-cli.ts";

const PASS = "wa1kwa1kwa1kwa1kwa1kwa1kwa1kwa1k";
const root = fileURLToPath(new URL("..", import.meta.url));
const preload = join(root, "bench/support/coverage-preload.mjs");
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const home = await mkdtemp(join(tmpdir(), "autoscan-walk-"));
const media = join(home, "media");
const shows = ["First Show", "Second Show"];
for (const show of shows) {
  await mkdir(join(media, "TV", show, "Season 01"), { recursive: true });
  await writeFile(join(media, "TV", show, "Season 01", `${show} - S01E01.mkv`), "x");
}
const plex = await startFakePlex({ sections: [{ key: "2", title: "TV", type: "show", locations: [join(media, "TV")] }] });
const port = await freePort();
await writeFile(
  join(home, "config.json"),
  JSON.stringify({
    SERVER_PASS: PASS,
    SERVER_IP: "127.0.0.1",
    SERVER_PORT: port,
    PLEX_LOCAL_URL: plex.url,
    PLEX_TOKEN: plex.token,
    PLEX_ANALYZE_TYPE: "off",
    SERVER_SCAN_DELAY: 0,
  }),
);
const out = join(home, "walk.txt");
const child = spawn(process.execPath, ["--import", preload, CLI_MAIN, "server", "--config", join(home, "config.json"), "--data-dir", join(home, "data"), "--logfile", "none"], {
  env: childEnv({ AUTOSCAN_WALK_OUT: out }),
  stdio: ["ignore", "ignore", "pipe"],
});
let stderr = "";
child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));

async function webhook(show: string): Promise<void> {
  const before = plex.scans.length;
  const body = {
    eventType: "Download",
    series: { id: 1, title: show, path: join(media, "TV", show) },
    episodes: [{ id: 1, episodeNumber: 1, seasonNumber: 1, title: "One" }],
    episodeFile: { id: 1, relativePath: `Season 01/${show} - S01E01.mkv` },
    isUpgrade: false,
  };
  const answer = await fetch(`http://127.0.0.1:${String(port)}/${PASS}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  if (!answer.ok) throw new Error(`webhook answered ${String(answer.status)}`);
  for (let waited = 0; plex.scans.length === before; waited += 10) {
    if (waited > 20_000) throw new Error(`no scan after 20 s:\n${stderr}`);
    await sleep(10);
  }
}

try {
  for (let waited = 0; ; waited += 20) {
    const status = await fetch(`http://127.0.0.1:${String(port)}/health`).then((r) => r.status, () => 0);
    if (status === 200) break;
    if (waited > 30_000) throw new Error(`not ready:\n${stderr}`);
    await sleep(20);
  }
  await webhook(shows[0] as string);
  await sleep(1_500);
  child.kill("SIGUSR2");
  await sleep(200);
  await webhook(shows[1] as string);
  child.kill("SIGUSR2");
  for (let waited = 0; ; waited += 20) {
    const text = await readFile(out, "utf8").catch(() => "");
    if (text) {
      const files = text.trim().split("\n").map((line) => line.split("\t") as [string, string]);
      const ours = files.filter(([path]) => path.startsWith(join(root, "src"))).map(([path, ran]) => [relative(join(root, "src"), path), ran] as const);
      const others = files.filter(([path]) => !path.startsWith(join(root, "src"))).length;
      ours.sort(([a], [b]) => a.localeCompare(b));
      console.log(`One Sonarr webhook, route to Plex call: ${String(ours.length)} of autoscan's files ran (and ${String(others)} files of libraries)`);
      for (const [path, ran] of ours) console.log(`  ${path.padEnd(44)} ${ran} function(s)`);
      break;
    }
    if (waited > 10_000) throw new Error("no coverage written");
    await sleep(20);
  }
} finally {
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  await exited;
  await plex.close();
  await rm(home, { recursive: true, force: true });
}
