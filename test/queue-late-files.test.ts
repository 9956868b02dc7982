import { mkdirSync, writeFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { startFakePlex, type FakePlex } from "./support/fake-plex.ts";
import { eventually, pendingFolders, sendManual, startServer, type AutoscanServer } from "./support/faults/autoscan-server.ts";
import { freshDir } from "./support/faults/mounts.ts";

/**
 * Files that reach the disk after their request (a download client's post-processing script, an rclone mount that
 * sees files a few seconds late), through the real service: manual requests for the episodes of one season, sent
 * before the files exist, become one scan of the season once they appear. The queue is keyed by the folder that will
 * be scanned: a request of unknown kind waits as given until a look finds a file, then joins its folder.
 */
const servers: AutoscanServer[] = [];
const roots: string[] = [];
const plexes: FakePlex[] = [];
afterAll(async () => {
  await Promise.all(servers.map((server) => server.kill9()));
  await Promise.all(plexes.map((plex) => plex.close()));
  await Promise.all(roots.map((root) => rm(root, { recursive: true, force: true })));
});

it("six manual requests for files not on disk yet become one scan of their season once the files appear", async () => {
  const root = await freshDir("autoscan-late-files-");
  roots.push(root);
  const media = join(root, "media");
  const season = join(media, "Show", "Season 01");
  mkdirSync(season, { recursive: true });
  const plex = await startFakePlex({ sections: [{ key: "1", title: "TV", type: "show", locations: [media] }] });
  plexes.push(plex);
  const server = await startServer(
    { dataDir: join(root, "data"), configDir: join(root, "config"), mediaRoot: media, plexUrl: plex.url, plexToken: plex.token, scanDelaySeconds: 1 },
    { onSpawn: (started) => servers.push(started) },
  );
  const episodes = Array.from({ length: 6 }, (_, i) => join(season, `Show - S01E0${String(i + 1)}.mkv`));
  for (const episode of episodes) expect((await sendManual(server, episode, 5_000)).status).toBe(200);
  // Not on disk yet: each waits as it was asked for, keyed by its path, never widened by a guess at its name.
  expect((await pendingFolders(server)).sort()).toEqual([...episodes].sort());
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  for (const episode of episodes) writeFileSync(episode, "x");
  await eventually(() => plex.scans.length > 0, { timeoutMs: 20_000, what: "a scan of the season", output: server.output });
  // Time for any further scan to show (a file check is a second apart, the merge delay a second).
  await new Promise((resolve) => setTimeout(resolve, 4_000));
  expect(plex.scans.map((scan) => scan.path)).toEqual([season]);
  expect(await pendingFolders(server)).toEqual([]);
  expect(server.output()).toContain(`its requests wait with the folder '${season}'`);
  await server.stop();
}, 60_000);
