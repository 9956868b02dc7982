import { opendir } from "node:fs/promises";
import { join } from "node:path";
import type { Config } from "../../config/schema.ts";
import type { Watchers } from "../../watch/from-config.ts";
import type { DiskEntry } from "../../paths/disk-probe.ts";
import { inotifyWatchLimit, mountTypeOf } from "../../watch/event-less-mounts.ts";
import { ok, warn, fail, type CheckResult } from "./check.ts";
import { readServerHealth } from "./running-server.ts";

/**
 * The folder watchers (`WATCH`), each path: that it is there, which filesystem it is on and whether that filesystem
 * tells of changes (`events` mode on FUSE, NFS or SMB misses what other machines write: `poll` is the mode there), and in
 * `events` mode whether the kernel lets autoscan watch that many folders (`fs.inotify.max_user_watches`, counted against
 * the folders under the paths). From the running server's `/health`: a watcher that stopped or waits for a mount.
 */
export interface WatcherFacts {
  readonly name: string;
  readonly mode: "events" | "poll";
  readonly paths: readonly { readonly path: string; readonly entry: DiskEntry; readonly mount?: { readonly mountPoint: string; readonly type: string; readonly eventLess: boolean } }[];
  /** Folders under the paths (counted up to `limit + 1`); `undefined` when not counted. */
  readonly folders?: number;
}

/** A watcher the running server's `/health` lists as waiting for a mount or stopped (the service's own shape). */
export type ServerWatcherTrouble = NonNullable<ReturnType<Watchers["health"]>["watchers"]>[number];

export async function watchChecks(config: Config, look: (path: string) => Promise<DiskEntry>): Promise<CheckResult[]> {
  const limit = await inotifyWatchLimit();
  const [watchers, health] = await Promise.all([watcherFacts(config, look, limit ?? 8192), readServerHealth(config).catch(() => undefined)]);
  return judgeWatchers(watchers, limit, health && ((health.watchers as ServerWatcherTrouble[] | undefined) ?? []));
}

/** Each path looked at through the disk probe, its filesystem, and (in `events` mode) the folders under it. */
function watcherFacts(config: Config, look: (path: string) => Promise<DiskEntry>, limit: number): Promise<WatcherFacts[]> {
  return Promise.all(
    Object.entries(config.WATCH).map(async ([name, watcher]) => {
      const paths = await Promise.all(
        watcher.PATHS.map(async (path) => {
          const entry = await look(path);
          const mount = await mountTypeOf(path);
          return { path, entry, ...(mount ? { mount } : {}) };
        }),
      );
      const usable = paths.filter((p) => p.entry === "directory" && !p.mount?.eventLess).map((p) => p.path);
      const folders = watcher.MODE === "events" && usable.length > 0 ? await countFolders(usable, limit + 1) : undefined;
      return { name, mode: watcher.MODE, paths, ...(folders === undefined ? {} : { folders }) };
    }),
  );
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

/** One watched path: there, answering, and watched in a way its filesystem tells of changes. */
function pathCheck(watcher: WatcherFacts, index: number, path: WatcherFacts["paths"][number]): CheckResult {
  const key = `WATCH.${watcher.name}`;
  const id = `watch.${watcher.name}.${String(index)}`;
  const title = `Watch ${watcher.name}: ${path.path}`;
  if (path.entry === "missing" || path.entry === "file") {
    return fail(id, title, `'${path.path}' is not a folder autoscan can see.`, `Set ${key}.PATHS[${String(index)}] to the folder as autoscan sees it (in Docker, under the media volume, e.g. /data/...).`);
  }
  if (path.entry === "unanswered") {
    return warn(id, title, `The mount holding '${path.path}' does not answer (a hung rclone, NFS or SMB mount).`, "Check the mount on the host; the watcher waits for it and goes on when it answers.");
  }
  const on = path.mount ? ` on ${path.mount.type} ('${path.mount.mountPoint}')` : "";
  if (watcher.mode === "events" && path.mount?.eventLess) {
    return warn(
      id,
      title,
      `Watched with change notifications${on}, a filesystem that sends none for files written elsewhere (another machine, the cloud): those changes are missed.`,
      `Set ${key}.MODE to "poll" (a walk every POLL_SECONDS).`,
    );
  }
  return ok(id, title, `A folder${on}, watched by ${watcher.mode === "events" ? "change notifications" : "a walk every POLL_SECONDS"}.`);
}

/** `troubled`: the running server's troubled watchers; undefined when no server answers here. */
export function judgeWatchers(watchers: readonly WatcherFacts[], limit: number | undefined, troubled: readonly ServerWatcherTrouble[] | undefined): CheckResult[] {
  const results: CheckResult[] = [];
  for (const watcher of watchers) {
    const key = `WATCH.${watcher.name}`;
    results.push(...watcher.paths.map((path, index) => pathCheck(watcher, index, path)));
    if (watcher.mode === "events" && limit !== undefined && watcher.folders !== undefined) {
      const id = `watch.${watcher.name}.inotify`;
      const title = `Watch ${watcher.name}: folder watches`;
      if (watcher.folders > limit) {
        const needed = Math.ceil((watcher.folders * 2) / 65_536) * 65_536;
        results.push(
          warn(
            id,
            title,
            `More than ${String(limit)} folders to watch, and the kernel allows ${String(limit)} (fs.inotify.max_user_watches): folders past the limit are not watched.`,
            `On the host: sysctl fs.inotify.max_user_watches=${String(needed)} (and the same line in /etc/sysctl.conf to keep it), or set ${key}.MODE to "poll".`,
          ),
        );
      } else {
        results.push(ok(id, title, `${String(watcher.folders)} folder(s) to watch; the kernel allows ${String(limit)}.`));
      }
    }
    const trouble = troubled?.find((entry) => entry.name === watcher.name);
    if (trouble) {
      const id = `watch.${watcher.name}.server`;
      const title = `Watch ${watcher.name}: running`;
      results.push(
        trouble.state === "waiting"
          ? warn(id, title, `The running server's watcher waits: '${trouble.waitingFor ?? "a mount"}' does not answer.`, "Check that mount on the host; the watcher goes on when it answers.")
          : fail(id, title, `The running server's watcher stopped: ${trouble.problem ?? "unknown reason"}.`, `Fix what it names in ${key}, then reload or restart autoscan.`),
      );
    }
  }
  return results;
}
