import { join } from "node:path";
import type { Config, WatcherConfig } from "../config/schema.ts";
import type { Clock } from "../core/clock.ts";
import type { Logger } from "../core/logger.ts";
import type { WatchMetrics } from "../core/metrics.ts";
import type { ScanRequest, ScanSink } from "../core/scan.ts";
import type { DiskProbe } from "../paths/disk-probe.ts";
import { findIgnoreMatch } from "../paths/ignore.ts";
import { createLocalToServer } from "../paths/local-to-server.ts";
import type { PathMapper } from "../paths/mapping.ts";
import { mountsUnderWith, mountTypeOf } from "./event-less-mounts.ts";
import { createFolderWatcher, type FolderWatcher, type WatcherStatus } from "./folder-watcher.ts";
import { watchFoldersWithKernel } from "./kernel-events.ts";
import { createWatchOutbox } from "./outbox.ts";
import type { SettledChange } from "./settler.ts";

/**
 * `WATCH` → the folder watchers, and their settled changes → scan requests, exactly as a manual post of that file
 * would make them (the path put in the server's form through SERVER_FILE_EXIST_PATH_MAPPINGS and SERVER_PATH_MAPPINGS,
 * the same merge, the same file check), source `Watch (<name>)`, through the outbox (./outbox.ts). A watcher hears
 * when its changes are stored, and only then saves them as seen: a stop while the store refuses them leaves them for
 * the next start's walk.
 */
export interface WatchersInput {
  readonly config: Config;
  readonly dataDir: string;
  readonly mapper: Pick<PathMapper, "toServer">;
  readonly sink: ScanSink;
  readonly probe: Pick<DiskProbe, "list" | "mountOf">;
  readonly clock: Clock;
  readonly log: Logger;
  readonly metrics?: WatchMetrics | undefined;
  /** Whether a server-form folder lies in a library (`false`: in none; `undefined`: cannot tell now). */
  readonly inLibrary?: (serverPath: string) => Promise<boolean | undefined>;
}

export interface Watchers {
  statuses(): WatcherStatus[];
  /** `/health`'s `watchers`, while one is stopped or waits for a mount (the status stays 200). */
  health(): { watchers?: { readonly name: string; readonly state: string; readonly problem?: string; readonly waitingFor?: string }[] };
  stop(): Promise<void>;
}

export async function startWatchers(input: WatchersInput): Promise<Watchers> {
  const { config, clock } = input;
  const log = input.log.child({ component: "WATCH" });
  const toServer = createLocalToServer(config.SERVER_FILE_EXIST_PATH_MAPPINGS, input.mapper);
  const watchers: FolderWatcher[] = [];
  const refused: WatcherStatus[] = [];
  const outbox = createWatchOutbox(input.sink, clock, log);

  function reporter(name: string, watcher: WatcherConfig): (changes: readonly SettledChange[]) => Promise<void> {
    return (changes) => {
      const requests = changes.map((change): ScanRequest => {
        input.metrics?.watchChange(name, change.event);
        return {
          path: toServer(change.path),
          kind: "file",
          source: `Watch (${name})`,
          event: change.event,
          receivedPath: change.path,
          ...(change.event === "Deleted" ? { deleted: true } : {}),
          ...(watcher.PRIORITY === undefined ? {} : { priority: watcher.PRIORITY }),
        };
      });
      return outbox.send(requests);
    };
  }

  for (const [name, watcher] of Object.entries(config.WATCH)) {
    const problem = await refusal(name, watcher);
    if (problem) {
      log.error({ watcher: name }, `${problem} Watcher '${name}' is not started.`);
      refused.push({ name, mode: watcher.MODE, paths: watcher.PATHS, ...(watcher.MODE === "poll" ? { pollMs: watcher.POLL_SECONDS * 1000 } : {}), state: "stopped", problem, folders: 0, files: 0, settling: 0 });
      continue;
    }
    await warnEventLess(name, watcher);
    const created = createFolderWatcher({
      name,
      settings: {
        paths: watcher.PATHS.map((path) => path.replace(/\/+$/, "") || "/"),
        mode: watcher.MODE,
        pollMs: watcher.POLL_SECONDS * 1000,
        minAgeMs: watcher.MIN_AGE_SECONDS * 1000,
        wanted: wantedBy(watcher),
      },
      stateFile: join(input.dataDir, "watch", `${name}.state`),
      probe: input.probe,
      clock,
      log,
      report: reporter(name, watcher),
      watchFolders: watchFoldersWithKernel,
      mountsUnder: mountsUnderWith(),
      walked: (seconds) => input.metrics?.watchWalk(name, seconds),
    });
    created.start();
    watchers.push(created);
  }

  /** A watched path that maps to no library is refused, with the key named (when the libraries can be asked). */
  async function refusal(name: string, watcher: WatcherConfig): Promise<string | undefined> {
    for (const [index, path] of watcher.PATHS.entries()) {
      const server = toServer(path.replace(/\/+$/, ""));
      const held = await input.inLibrary?.(server).catch(() => undefined);
      if (held === false) {
        return (
          `WATCH.${name}.PATHS[${String(index)}]: '${path}' is '${server}' in the server's form, and no library holds it. ` +
          "Fix SERVER_FILE_EXIST_PATH_MAPPINGS (its key is the path as autoscan sees it) or add the folder to a library."
        );
      }
    }
    return undefined;
  }

  async function warnEventLess(name: string, watcher: WatcherConfig): Promise<void> {
    if (watcher.MODE !== "events") return;
    for (const path of watcher.PATHS) {
      const mount = await mountTypeOf(path);
      if (mount?.eventLess) {
        log.warn(
          { watcher: name, path, mount: mount.mountPoint, type: mount.type },
          `WATCH.${name}: '${path}' is on ${mount.type} ('${mount.mountPoint}'), which sends no change notifications for files written elsewhere (another machine, the cloud). Set WATCH.${name}.MODE to "poll".`,
        );
      }
    }
  }

  const statuses = (): WatcherStatus[] => [...refused, ...watchers.map((watcher) => watcher.status())];
  return {
    statuses,
    health() {
      const troubled = statuses().filter((s) => s.state === "stopped" || s.state === "waiting");
      if (troubled.length === 0) return {};
      return {
        watchers: troubled.map((s) => ({
          name: s.name,
          state: s.state,
          ...(s.problem === undefined ? {} : { problem: s.problem }),
          ...(s.waitingFor === undefined ? {} : { waitingFor: s.waitingFor }),
        })),
      };
    },
    async stop() {
      // The watchers save, as not seen, whatever the store still refused at the outbox's last try.
      await outbox.stop();
      await Promise.all(watchers.map((watcher) => watcher.stop()));
    },
  };
}

/** EXTENSIONS (with or without the dot, any case) and IGNORE (SERVER_IGNORE_LIST's substring rule). */
function wantedBy(watcher: WatcherConfig): (path: string) => boolean {
  const extensions = new Set(watcher.EXTENSIONS.map((ext) => ext.replace(/^\./, "").toLowerCase()));
  return (path) => {
    if (findIgnoreMatch(path, watcher.IGNORE) !== undefined) return false;
    if (extensions.size === 0) return true;
    const dot = path.lastIndexOf(".");
    return dot > path.lastIndexOf("/") && extensions.has(path.slice(dot + 1).toLowerCase());
  };
}
