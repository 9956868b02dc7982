import { opendir } from "node:fs/promises";
import { join } from "node:path";
import type { Config } from "../../config/schema.ts";
import type { Logger } from "../../core/logger.ts";
import type { ServerWatcherTrouble, WatcherFacts, WatchProbe } from "../../ops/doctor/watch.ts";
import { inotifyWatchLimit, mountTypeOf } from "../../watch/event-less-mounts.ts";
import { sharedDiskProbe } from "./queue.ts";
import { readServerHealth } from "./server-health.ts";

/** `WATCH` → the doctor's watcher facts (each path looked at through the disk probe), and the server's troubled ones. */
export function watchProbe(config: Config, log: Logger): WatchProbe {
  const probe = sharedDiskProbe(log);
  let limit: Promise<number | undefined> | undefined;
  return {
    inotifyLimit: () => (limit ??= inotifyWatchLimit()),
    async watchers() {
      const max = (await (limit ??= inotifyWatchLimit())) ?? 8192;
      return Promise.all(
        Object.entries(config.WATCH).map(async ([name, watcher]): Promise<WatcherFacts> => {
          const paths = await Promise.all(
            watcher.PATHS.map(async (path) => {
              const entry = await probe.stat(path);
              const mount = await mountTypeOf(path);
              return { path, entry, ...(mount ? { mount } : {}) };
            }),
          );
          const usable = paths.filter((p) => p.entry === "directory" && !p.mount?.eventLess).map((p) => p.path);
          const folders = watcher.MODE === "events" && usable.length > 0 ? await countFolders(usable, max + 1) : undefined;
          return { name, mode: watcher.MODE, paths, ...(folders === undefined ? {} : { folders }) };
        }),
      );
    },
    async troubled() {
      const body = await readServerHealth(config);
      return body === undefined ? undefined : ((body.watchers as ServerWatcherTrouble[] | undefined) ?? []);
    },
  };
}

/** Folders under `roots` (themselves included), counted up to `stopAt` and for at most 10 s: a local disk only. */
async function countFolders(roots: readonly string[], stopAt: number): Promise<number> {
  const deadline = Date.now() + 10_000;
  const queue = [...roots];
  let count = 0;
  while (queue.length > 0 && count < stopAt && Date.now() < deadline) {
    const dir = queue.pop() as string;
    count++;
    try {
      for await (const entry of await opendir(dir)) if (entry.isDirectory()) queue.push(join(dir, entry.name));
    } catch {
      // A folder that went away or cannot be read is not watched either.
    }
  }
  return count;
}
