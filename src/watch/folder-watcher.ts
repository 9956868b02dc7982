import { join } from "node:path";
import type { Clock } from "../core/clock.ts";
import { describeError } from "../core/errors.ts";
import type { Logger } from "../core/logger.ts";
import type { DirListing, DiskProbe } from "../paths/disk-probe.ts";
import { diffListings, encodeListing, fileCountOf, filesOf, foldersOf, keptFolders, type Listing } from "./listing.ts";
import { createSettler, type SettledChange } from "./settler.ts";
import type { WatchFolders } from "./kernel-events.ts";
import { loadTreeState, saveTreeState } from "./tree-state.ts";

/**
 * One watcher of `WATCH`: its folders as the disk shows them (`listing.ts`, kept on disk by `tree-state.ts`), brought
 * up to date by a trigger, and the files that changed, once settled (`settler.ts`), handed to `report`.
 *
 * - `poll`: a walk of every folder every `POLL_SECONDS`, never two at once.
 * - `events`: one walk at start, then the kernel's change notifications (`kernel-events.ts`: one per folder, never
 *   per file) say which folder to list again; a walk every 6 hours finds what no notification said.
 * Either way the first walk compares the disk with what was kept at the last stop, so what changed while autoscan was
 * down is reported; a watcher's very first walk only records what is there (as the backfill starts from now).
 *
 * Every look at the disk goes through the disk probe, one folder at a time: a mount that hangs holds this watcher's
 * walk (it says once what it waits for, and goes on when the mount answers), never the intake or the other watchers.
 */
export interface WatcherSettings {
  readonly paths: readonly string[];
  readonly mode: "events" | "poll";
  readonly pollMs: number;
  readonly minAgeMs: number;
  /** Whether a file is reported at all (EXTENSIONS, IGNORE). */
  readonly wanted: (path: string) => boolean;
}


export interface FolderWatcherOptions {
  readonly name: string;
  readonly settings: WatcherSettings;
  /** Where the walk state is kept (`<data>/watch/<name>.state`). */
  readonly stateFile: string;
  readonly probe: Pick<DiskProbe, "list" | "mountOf">;
  readonly clock: Clock;
  /** The watcher's logger (component WATCH). */
  readonly log: Logger;
  /**
   * Settled changes (local paths); must return at once. Resolves once they are stored (the queue took them; never
   * rejects): until then a save keeps them as not seen yet, so a stop before that loses none of them.
   */
  readonly report: (changes: readonly SettledChange[]) => Promise<void>;
  /** `events` mode's notifications (absent: `events` falls back to `poll`). */
  readonly watchFolders?: WatchFolders;
  /** A walk ended: how long it took. */
  readonly walked?: (seconds: number) => void;
}

export interface WatcherStatus {
  readonly name: string;
  readonly mode: "events" | "poll";
  readonly paths: readonly string[];
  /** `poll`: the time between two walks. */
  readonly pollMs?: number;
  /** `starting` (the first walk), `watching`, `waiting` (a mount does not answer), `stopped` (with `problem`). */
  readonly state: "starting" | "watching" | "waiting" | "stopped";
  readonly waitingFor?: string;
  readonly problem?: string;
  readonly lastEventAt?: number;
  readonly lastWalkAt?: number;
  readonly lastWalkMs?: number;
  readonly folders: number;
  readonly files: number;
  /** Files waiting to settle (MIN_AGE_SECONDS). */
  readonly settling: number;
}

export interface FolderWatcher {
  start(): void;
  status(): WatcherStatus;
  stop(): Promise<void>;
}

const UNANSWERED_RETRY_MS = 5_000;
const SAVE_DELAY_MS = 60_000;
/** `events` mode's own walk, for what no notification said. */
const EVENTS_WALK_MS = 6 * 60 * 60_000;

export function createFolderWatcher(options: FolderWatcherOptions): FolderWatcher {
  const { name, settings, clock, probe, log } = options;
  const fields = { watcher: name };
  const stop = new AbortController();
  let dirs = new Map<string, Listing>();
  let fileCount = 0;
  let state: WatcherStatus["state"] = "starting";
  let waitingFor: string | undefined;
  let problem: string | undefined;
  let lastEventAt: number | undefined;
  let lastWalkAt: number | undefined;
  let lastWalkMs: number | undefined;
  let dirty = false;
  let saving: Promise<void> | undefined;
  let running: Promise<void> | undefined;
  const kernel = options.watchFolders?.(
    (dir) => queueRelist(dir),
    (dir, error) => kernelFailed(dir, error),
  );
  const relistQueue = new Set<string>();
  let relisting: Promise<void> | undefined;
  let lane: Promise<unknown> = Promise.resolve();
  const mode = settings.mode === "events" && kernel ? "events" : "poll";
  /** Reported, and not stored by the queue yet: saved as not seen. */
  const unstored = new Set<SettledChange>();

  const settler = createSettler({
    minAgeMs: settings.minAgeMs,
    clock,
    relist: async (dir) => {
      const listing = await listOnce(dir);
      if (listing === "unanswered") return undefined;
      apply(dir, listing === "missing" ? undefined : listing, true);
      return listing === "missing" ? [] : listing.files;
    },
    report: (changes) => {
      lastEventAt = clock.now();
      for (const change of changes) unstored.add(change);
      void options.report(changes).then(() => {
        // Stored: the next save says they were seen.
        for (const change of changes) unstored.delete(change);
        dirty = true;
        scheduleSave();
      });
    },
  });

  const listOnce = (dir: string): Promise<DirListing | "missing" | "unanswered"> => probe.list(dir);

  /** Lists a folder, holding on while its mount does not answer (said once, and once when it answers again). */
  async function list(dir: string): Promise<DirListing | "missing" | undefined> {
    for (;;) {
      if (stop.signal.aborted) return undefined;
      const listing = await listOnce(dir);
      if (listing !== "unanswered") {
        if (state === "waiting") {
          log.info({ ...fields, mount: waitingFor }, `Watcher '${name}' goes on: '${waitingFor ?? dir}' answers again.`);
          state = "watching";
          waitingFor = undefined;
        }
        return listing;
      }
      if (state !== "waiting") {
        waitingFor = await probe.mountOf(dir);
        state = "waiting";
        log.warn(
          { ...fields, mount: waitingFor, path: dir },
          `Watcher '${name}' is waiting: '${waitingFor}' does not answer (a look at '${dir}' got no answer). It goes on when the mount answers; webhooks and other watchers are not held.`,
        );
      }
      await clock.sleep(UNANSWERED_RETRY_MS, stop.signal);
    }
  }

  /** A folder's listing now (undefined: it is gone): kept, and what changed in it handed to the settler. */
  function apply(dir: string, listing: DirListing | undefined, report: boolean): string[] {
    const before = dirs.get(dir);
    if (listing === undefined) {
      forget(dir, report);
      return [];
    }
    const after = encodeListing(listing);
    const folders = keptFolders(listing);
    if (before === after) return folders;
    dirs.set(dir, after);
    dirty = true;
    fileCount += fileCountOf(after) - fileCountOf(before ?? "");
    // A folder seen for the first time on a walk that only records: nothing to compare (and no garbage made for it).
    if (before === undefined && !report) return folders;
    const changes = diffListings(before, after);
    if (report) {
      const known = new Set(before === undefined ? [] : filesOf(before).map((file) => file.name));
      for (const file of changes.changed) if (settings.wanted(join(dir, file.name))) settler.saw(dir, file, !known.has(file.name));
      for (const gone of changes.removed) if (settings.wanted(join(dir, gone))) settler.gone(dir, gone);
    }
    for (const gone of changes.goneFolders) forget(join(dir, gone), report);
    return folders;
  }

  /** A folder is gone: its files (and its subfolders') are reported gone, and it is watched no more. */
  function forget(dir: string, report: boolean): void {
    const prefix = `${dir}/`;
    for (const [known, listing] of [...dirs]) {
      if (known !== dir && !known.startsWith(prefix)) continue;
      dirs.delete(known);
      dirty = true;
      kernel?.remove(known);
      fileCount -= fileCountOf(listing);
      if (report) for (const file of filesOf(listing)) if (settings.wanted(join(known, file.name))) settler.gone(known, file.name);
    }
  }

  /** Walks `roots` and everything under them, one folder at a time. */
  async function walk(roots: readonly string[], report: boolean): Promise<void> {
    const started = clock.now();
    const seen = new Set<string>();
    const queue = [...roots];
    while (queue.length > 0) {
      const dir = queue.shift() as string;
      const listing = await list(dir);
      if (stop.signal.aborted) return;
      if (listing === "missing" && roots.includes(dir) && settings.paths.includes(dir)) {
        problemOnce(`'${dir}' does not exist (WATCH.${name}.PATHS)`);
      }
      const folders = apply(dir, listing === "missing" ? undefined : listing, report);
      if (listing === "missing" || listing === undefined) continue;
      seen.add(dir);
      // A folder that appeared while watching is listed once more once watched: what landed in it between its
      // listing and the start of its notifications would raise no event, and be missed.
      if (mode === "events" && watchKernel(dir) && roots !== settings.paths) relistQueue.add(dir);
      for (const folder of folders) queue.push(join(dir, folder));
    }
    // Folders kept from before that the walk did not reach any more (their parent went, or a root changed).
    const prefixes = roots.map((root) => `${root}/`);
    for (const dir of [...dirs.keys()]) {
      if (!seen.has(dir) && (roots.includes(dir) || prefixes.some((prefix) => dir.startsWith(prefix)))) forget(dir, report);
    }
    const ms = clock.now() - started;
    if (roots === settings.paths) {
      lastWalkAt = clock.now();
      lastWalkMs = ms;
      options.walked?.(ms / 1000);
    }
  }

  const problems = new Set<string>();
  function problemOnce(text: string): void {
    if (problems.has(text)) return;
    problems.add(text);
    log.warn(fields, `Watcher '${name}': ${text}.`);
  }

  /** Starts the notifications of a folder; true when they start now. */
  function watchKernel(dir: string): boolean {
    if (!kernel || kernel.has(dir)) return false;
    try {
      kernel.add(dir);
      return true;
    } catch (error) {
      kernelFailed(dir, error as Error);
      return false;
    }
  }

  function kernelFailed(dir: string, error: Error): void {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOSPC") {
      problemOnce(
        `the kernel's limit of watched folders (fs.inotify.max_user_watches) is reached at '${dir}': raise it on the host ` +
          "(sysctl fs.inotify.max_user_watches=524288, and in /etc/sysctl.conf) or use MODE \"poll\"; folders past the limit are not watched",
      );
    } else if (code !== "ENOENT") {
      problemOnce(`cannot watch '${dir}' (${describeError(error)})`);
    }
  }

  function queueRelist(dir: string): void {
    relistQueue.add(dir);
    relisting ??= inLane(async () => {
      // Events come in bursts (a file written in many pieces): a short pause gathers them into one listing per folder.
      await clock.sleep(200, stop.signal);
      while (relistQueue.size > 0 && !stop.signal.aborted) {
        const [next] = relistQueue;
        relistQueue.delete(next as string);
        const listing = await list(next as string);
        if (listing === undefined) break;
        const before = new Set(dirs.has(next as string) ? foldersOf(dirs.get(next as string) as string) : []);
        const folders = apply(next as string, listing === "missing" ? undefined : listing, true);
        // A folder moved in: everything in it is new.
        const added = folders.filter((folder) => !before.has(folder)).map((folder) => join(next as string, folder));
        if (added.length > 0) await walk(added, true);
      }
    }).finally(() => {
      relisting = undefined;
      scheduleSave();
      if (relistQueue.size > 0) queueRelist([...relistQueue][0] as string);
    });
  }

  function scheduleSave(): void {
    if (!dirty || saving) return;
    saving = clock.sleep(SAVE_DELAY_MS, stop.signal).then(() => save()).finally(() => (saving = undefined));
  }

  /**
   * The folders as kept on disk: a change still waiting to settle, or reported and not stored by the queue yet, is kept
   * as not seen (a new file left out, a changed one with size -1, a deleted one still listed), so a start after a stop
   * or a crash reports it again.
   */
  function asSaved(): ReadonlyMap<string, Listing> {
    const unsettled = [...settler.pending(), ...[...unstored].map(splitChange)];
    if (unsettled.length === 0) return dirs;
    const saved = new Map(dirs);
    for (const dir of new Set(unsettled.map((change) => change.dir))) {
      const listing = dirs.get(dir) ?? "";
      const files = new Map(filesOf(listing).map((file) => [file.name, file]));
      for (const change of unsettled) {
        if (change.dir !== dir) continue;
        if (change.event === "Created") files.delete(change.name);
        else files.set(change.name, { name: change.name, size: -1, mtimeMs: -1 });
      }
      saved.set(dir, encodeListing({ folders: foldersOf(listing), files: [...files.values()] }));
    }
    return saved;
  }

  function splitChange(change: SettledChange): { dir: string; name: string; event: SettledChange["event"] } {
    const slash = change.path.lastIndexOf("/");
    return { dir: change.path.slice(0, slash) || "/", name: change.path.slice(slash + 1), event: change.event };
  }

  async function save(): Promise<void> {
    if (!dirty) return;
    dirty = false;
    try {
      await saveTreeState(options.stateFile, settings.paths, asSaved());
    } catch (error) {
      dirty = true;
      log.warn({ ...fields, err: error }, `Watcher '${name}' could not keep what it knows in '${options.stateFile}' (${describeError(error)}); it tries again later.`);
    }
  }

  async function run(): Promise<void> {
    const loaded = await loadTreeState(options.stateFile, settings.paths);
    dirs = loaded.dirs;
    for (const listing of dirs.values()) fileCount += fileCountOf(listing);
    if (!loaded.known) log.info(fields, `Watcher '${name}' starts: recording what is in ${settings.paths.map((p) => `'${p}'`).join(", ")} (nothing there now is scanned).`);
    await inLane(() => walk(settings.paths, loaded.known));
    if (stop.signal.aborted) return;
    await save();
    state = "watching";
    log.info(
      { ...fields, folders: dirs.size, ms: lastWalkMs },
      `Watcher '${name}' is watching ${String(dirs.size)} folder(s) (${mode === "events" ? "change notifications" : `a walk every ${String(settings.pollMs / 1000)} s`}; the first walk took ${String(Math.round((lastWalkMs ?? 0) / 100) / 10)} s).`,
    );
    // `events` walks too, rarely: what a notification never said (the kernel's queue overflowed, a change in the
    // instant between a folder's listing and the start of its notifications) is found within hours, not never.
    const every = mode === "events" ? EVENTS_WALK_MS : settings.pollMs;
    while (!stop.signal.aborted) {
      await clock.sleep(every, stop.signal);
      if (stop.signal.aborted) return;
      await inLane(() => walk(settings.paths, true));
      await save();
    }
  }

  /** Walks and event listings take turns: two at once would each keep what the other had just replaced. */
  function inLane<T>(work: () => Promise<T>): Promise<T> {
    const next = lane.then(work, work);
    lane = next.catch(() => undefined);
    return next;
  }

  return {
    start() {
      running = run().catch((error: unknown) => {
        if (stop.signal.aborted) return;
        state = "stopped";
        problem = describeError(error);
        log.error({ ...fields, err: error }, `Watcher '${name}' stopped: ${problem}`);
      });
    },
    status() {
      return {
        name,
        mode,
        paths: settings.paths,
        ...(mode === "poll" ? { pollMs: settings.pollMs } : {}),
        state,
        ...(waitingFor === undefined ? {} : { waitingFor }),
        ...(problem === undefined ? {} : { problem }),
        ...(lastEventAt === undefined ? {} : { lastEventAt }),
        ...(lastWalkAt === undefined ? {} : { lastWalkAt }),
        ...(lastWalkMs === undefined ? {} : { lastWalkMs }),
        folders: dirs.size,
        files: fileCount,
        settling: settler.waiting(),
      };
    },
    async stop() {
      stop.abort();
      settler.stop();
      kernel?.closeAll();
      await running;
      await relisting?.catch(() => undefined);
      // A save the delay had put off runs now (its sleep ends at the stop): the stop waits for it, then saves the rest.
      await saving;
      await save();
    },
  };
}
