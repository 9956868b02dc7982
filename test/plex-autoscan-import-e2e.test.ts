import { mkdirSync, writeFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { startFakePlex, type FakePlex } from "./support/fake-plex.ts";
import { eventually, fileOf, folderOf, pendingFolders, sendScan, startServer, type AutoscanServer } from "./support/faults/autoscan-server.ts";
import { freshDir } from "./support/faults/mounts.ts";
import { writePlexAutoscanQueue } from "./support/plex-autoscan-queue.ts";

/**
 * Moving over with a backlog, through the real service: plex_autoscan's `queue.db` (peewee's `queueitemmodel`, as
 * plex_autoscan writes it) with 20,000 waiting rows where autoscan's queue goes, 2,000 season folders of 10 episodes
 * each on disk. The service starts at once and imports beside its work; webhooks for some of the same folders arrive
 * while it runs and just after. Every folder is scanned exactly once, and nothing is called a hung disk. (A webhook
 * for a folder the import has not reached yet may be scanned before the import's requests for it arrive; those are
 * then new work and scanned again, as for any request that arrives after a scan.)
 */
const FOLDERS = 2_000;
const EPISODES = 10;

const servers: AutoscanServer[] = [];
const roots: string[] = [];
const plexes: FakePlex[] = [];
afterAll(async () => {
  await Promise.all(servers.map((server) => server.kill9()));
  await Promise.all(plexes.map((plex) => plex.close()));
  await Promise.all(roots.map((root) => rm(root, { recursive: true, force: true })));
});

const episode = (media: string, n: number, e: number): string =>
  e === 1 ? fileOf(media, n) : `${folderOf(media, n)}/Show ${String(n)} - S01E${String(e).padStart(2, "0")}.mkv`;

it("a plex_autoscan queue of 20,000 rows: ready at once, every folder scanned once, merged with webhooks, no false warning", async () => {
  const root = await freshDir("autoscan-import-e2e-");
  roots.push(root);
  const media = join(root, "media");
  for (let n = 0; n < FOLDERS; n++) {
    mkdirSync(folderOf(media, n), { recursive: true });
    for (let e = 1; e <= EPISODES; e++) writeFileSync(episode(media, n, e), "x");
  }
  const dataDir = join(root, "data");
  mkdirSync(dataDir, { recursive: true });
  const rows: string[] = [];
  for (let n = 0; n < FOLDERS; n++) for (let e = 1; e <= EPISODES; e++) rows.push(episode(media, n, e));
  writePlexAutoscanQueue(join(dataDir, "queue.db"), rows);
  const plex = await startFakePlex({ sections: [{ key: "2", title: "TV", type: "show", locations: [media] }] });
  plexes.push(plex);

  const server = await startServer(
    { dataDir, configDir: join(root, "config"), mediaRoot: media, plexUrl: plex.url, plexToken: plex.token, scanDelaySeconds: 2 },
    { onSpawn: (started) => servers.push(started) },
  );
  // Webhooks for folders the import holds: while it runs (answered at once) and just after it, before those folders
  // were scanned: merged, not scanned twice.
  const during = await Promise.all([0, 1, 2].map((n) => sendScan(server, media, n, { timeoutMs: 5_000 })));
  expect(during.map((outcome) => outcome.status)).toEqual([200, 200, 200]);
  await eventually(() => server.output().includes("Imported 20000 scan request(s) from the plex_autoscan queue"), {
    timeoutMs: 30_000,
    what: "the import's last line",
    output: server.output,
  });
  const after = await Promise.all([999, 1_999].map((n) => sendScan(server, media, n, { timeoutMs: 5_000 })));
  expect(after.map((outcome) => outcome.status)).toEqual([200, 200]);
  await eventually(async () => plex.scans.length >= FOLDERS && (await pendingFolders(server)).length === 0, {
    timeoutMs: 90_000,
    what: `${String(FOLDERS)} scans`,
    output: server.output,
  });
  // Time for any second scan to show.
  await new Promise((resolve) => setTimeout(resolve, 3_000));
  const scanned = plex.scans.map((scan) => scan.path);
  expect(new Set(scanned).size).toBe(FOLDERS);
  expect(scanned.length).toBe(FOLDERS);
  expect(scanned).toEqual(expect.arrayContaining([folderOf(media, 0), folderOf(media, 1_999)]));
  expect(server.output()).not.toMatch(/did not answer|does not answer|hung mount/i);
  await server.stop();
}, 150_000);
