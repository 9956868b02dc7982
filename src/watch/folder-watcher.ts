import { join } from "node:path";
import type { Clock } from "../core/clock.ts";
import { describeError } from "../core/errors.ts";
import type { Logger } from "../core/logger.ts";
import type { DiskProbe } from "../paths/disk-probe.ts";
import { isUnreadable, type DirListing, type ListAnswer } from "../paths/dir-listing.ts";
import { diffListingsInSlices, encodeListingInSlices, fileCountOf, filesOf, foldersOf, keptFolders, type Listing } from "./listing.ts";
import type { MountsUnder } from "./event-less-mounts.ts";
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
 * Every look at the watched tree goes through the disk probe (its listing says what the folder is too), one folder at
 * a time, and nothing here looks at the tree on its own: a mount that hangs holds this watcher's walk in the probe's
 * helper process (it says once what it waits for, and goes on when the mount answers), never libuv's thread pool,
 * the intake or the other watchers.
 *
 * What the walk holds to (`dir-listing.ts`: a folder's identity, its links, unreadable apart from missing):
 * - it follows no symbolic link to a folder below a watched path (out of the tree, or back into it) and enters no
 *   folder twice (by device and inode: a bind mount into a loop); what it skipped is said once, and the walk is as
 *   large as the tree, never more;
 * - a folder it cannot read (EACCES) is a warning naming it and the error, never a deletion: what was known of it is
 *   kept, and it is looked at again until it can be read;
 * - `events`: every 10 s the watched paths and the mount points below them are looked at (one listing each, and the
 *   mount table): a path missing at start, deleted and made again, or a filesystem unmounted and mounted again is
 *   watched again, and said once.
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
  /** `events` mode: the filesystems mounted below the watched paths (absent: mounts are not looked at). */
  readonly mountsUnder?: MountsUnder;
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
/** `events` mode: how often the watched paths, the mounts below them and unreadable folders are looked at. */
const ROOT_LOOK_MS = 10_000;
/** Files handled between two turns of the event loop. */
const YIELD_EVERY = 1_000;
const yieldTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
/** Skipped links named in a warning (the rest counted). */
const NAMED = 3;

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
  /** Each listed folder's device and inode (what was known at the last look). */
  const ids = new Map<string, string>();
  /** Folders that could not be read, and the error: what was known of them is kept. */
  const unreadable = new Map<string, string>();
  /** Watched paths that do not exist now (said once each time). */
  const absentRoots = new Set<string>();
  /** Watched paths whose folders this watcher has a picture of (a path seen for the first time only records). */
  const recorded = new Set<string>();
  /** Links and loops not followed, and those already said. */
  const skipped = new Map<string, string>();
  const toldSkipped = new Set<string>();
  /** `events`: the mount points below the watched paths at the last look. */
  let mounts: readonly string[] | undefined;

  const settler = createSettler({
    minAgeMs: settings.minAgeMs,
    clock,
    relist: async (dir) => {
      const listing = await listOnce(dir);
      if (listing === "unanswered") return undefined;
      const found = identified(dir, listing);
      if (found.kind === "unreadable") return void cannotRead(dir, found.code);
      if (found.kind === "link") {
        notFollowed(dir, "a symbolic link");
        return [];
      }
      await apply(dir, found.kind === "missing" ? undefined : found.listing, true);
      if (found.kind === "folder") skipLinks(dir, found.listing);
      return found.kind === "missing" ? [] : found.listing.files;
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

  /** A watched path that is a link is followed (the user named it); below it, a link is a link. */
  const listOnce = (dir: string): Promise<ListAnswer | "unanswered"> => probe.list(dir, { followLink: settings.paths.includes(dir) });

  /** Lists a folder, holding on while its mount does not answer (said once, and once when it answers again). */
  async function list(dir: string): Promise<ListAnswer | undefined> {
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

  type Found =
    | { readonly kind: "folder"; readonly listing: DirListing; readonly id: string }
    | { readonly kind: "missing" }
    | { readonly kind: "link" }
    | { readonly kind: "unreadable"; readonly code: string };

  /** A folder's listing and what it is (undefined: the watcher stops). */
  async function look(dir: string): Promise<Found | undefined> {
    const listing = await list(dir);
    return listing === undefined ? undefined : identified(dir, listing);
  }

  function identified(dir: string, listing: ListAnswer): Found {
    if (listing === "missing" || listing === "link") return { kind: listing };
    if (isUnreadable(listing)) return { kind: "unreadable", code: listing.unreadable };
    if (unreadable.delete(dir)) log.info({ ...fields, path: dir }, `Watcher '${name}' can read '${dir}' again.`);
    return { kind: "folder", listing, id: listing.id };
  }

  /** The links to folders a listing holds are not followed (a walk says so; a folder that was there is forgotten). */
  function skipLinks(dir: string, listing: DirListing): void {
    for (const link of listing.links) {
      const path = join(dir, link);
      if (dirs.has(path) || !skipped.has(path)) notFollowed(path, "a symbolic link");
    }
  }

  /** A folder that is there and cannot be read: said once, and what was known of it kept (never reported gone). */
  function cannotRead(dir: string, code: string): void {
    if (unreadable.has(dir)) return;
    unreadable.set(dir, code);
    log.warn(
      { ...fields, path: dir, code },
      `Watcher '${name}' cannot read '${dir}' (${code}): what it knew of that folder is kept (nothing in it is reported gone), ` +
        `and it is looked at again ${mode === "events" ? `every ${String(ROOT_LOOK_MS / 1000)} s` : "at each walk"} until it can be read.`,
    );
  }

  /** A link (or a second way into a folder already walked) is not followed; what it held here is forgotten unreported. */
  function notFollowed(dir: string, why: string): void {
    if (!skipped.has(dir)) skipped.set(dir, why);
    forget(dir, false);
  }

  /** Says once which links and loops were not followed (one line for all those found by a walk). */
  function tellSkipped(): void {
    const fresh = [...skipped.keys()].filter((dir) => !toldSkipped.has(dir));
    if (fresh.length === 0) return;
    for (const dir of fresh) toldSkipped.add(dir);
    const named = fresh.slice(0, NAMED).map((dir) => `'${dir}' (${skipped.get(dir) ?? ""})`).join(", ");
    const more = fresh.length > NAMED ? ` and ${String(fresh.length - NAMED)} more` : "";
    log.warn(
      { ...fields, skipped: fresh.length },
      `Watcher '${name}' does not follow ${String(fresh.length)} symbolic link(s) or loop(s) to folders: ${named}${more}. ` +
        "A link may lead out of the watched folders or back into them; watch its target as a path of its own if it should be watched.",
    );
  }

  /** A folder whose device and inode are an ancestor's: a way back into the tree (a bind mount or a link above). */
  function ancestorWith(dir: string, id: string): string | undefined {
    for (let at = dir.lastIndexOf("/"); at > 0; at = dir.lastIndexOf("/", at - 1)) {
      const parent = dir.slice(0, at);
      if (ids.get(parent) === id) return parent;
    }
    return ids.get("/") === id && dir !== "/" ? "/" : undefined;
  }

  function rootAbsent(root: string): void {
    if (absentRoots.has(root)) return;
    absentRoots.add(root);
    log.warn({ ...fields, path: root }, `Watcher '${name}': '${root}' does not exist (WATCH.${name}.PATHS); it is watched once it does.`);
  }

  /**
   * A folder's listing now (undefined: it is gone): kept, and what changed in it handed to the settler, a thousand
   * files at a time with a turn of the event loop between (50,000 files at once must not hold webhooks and /health).
   */
  async function apply(dir: string, listing: DirListing | undefined, report: boolean): Promise<string[]> {
    if (listing === undefined) {
      forget(dir, report);
      return [];
    }
    const after = await encodeListingInSlices(listing, yieldTurn);
    // Read once encoded: a listing of the same folder applied during those turns is what this one is compared with.
    const before = dirs.get(dir);
    const folders = keptFolders(listing);
    if (before === after) return folders;
    dirs.set(dir, after);
    dirty = true;
    fileCount += fileCountOf(after) - fileCountOf(before ?? "");
    // A folder seen for the first time on a walk that only records: nothing to compare (and no garbage made for it).
    if (before === undefined && !report) return folders;
    const changes = await diffListingsInSlices(before, after, yieldTurn);
    if (report) {
      for (const [index, file] of changes.changed.entries()) {
        if (settings.wanted(join(dir, file.name))) settler.saw(dir, file, changes.created.has(file.name));
        if (index % YIELD_EVERY === YIELD_EVERY - 1) await yieldTurn();
      }
      for (const gone of changes.removed) if (settings.wanted(join(dir, gone))) settler.gone(dir, gone);
    }
    // A folder that became a link is not followed, and not reported gone (`skipLinks`).
    for (const gone of changes.goneFolders) if (!listing.links.includes(gone)) forget(join(dir, gone), report);
    return folders;
  }

  /** A folder is gone: its files (and its subfolders') are reported gone, and it is watched no more. */
  function forget(dir: string, report: boolean): void {
    const prefix = `${dir}/`;
    for (const [known, listing] of [...dirs]) {
      if (known !== dir && !known.startsWith(prefix)) continue;
      dirs.delete(known);
      ids.delete(known);
      dirty = true;
      kernel?.remove(known);
      fileCount -= fileCountOf(listing);
      if (report) for (const file of filesOf(listing)) if (settings.wanted(join(known, file.name))) settler.gone(known, file.name);
    }
  }

  /** Walks `roots` and everything under them, one folder at a time, each folder once. */
  async function walk(roots: readonly string[], report: boolean): Promise<void> {
    const started = clock.now();
    const seen = new Set<string>();
    /** Device and inode → the folder walked with it. */
    const walked = new Map<string, string>();
    const queue = [...roots];
    while (queue.length > 0) {
      const dir = queue.shift() as string;
      const found = await look(dir);
      if (stop.signal.aborted || found === undefined) return;
      const root = settings.paths.includes(dir);
      if (found.kind === "link") {
        notFollowed(dir, "a symbolic link");
        continue;
      }
      if (found.kind === "unreadable") {
        cannotRead(dir, found.code);
        // What was known under it stays as it was.
        for (const known of dirs.keys()) if (known === dir || known.startsWith(`${dir}/`)) seen.add(known);
        continue;
      }
      if (found.kind === "missing") {
        if (root) rootAbsent(dir);
        await apply(dir, undefined, report);
        continue;
      }
      const again = walked.get(found.id) ?? ancestorWith(dir, found.id);
      if (again !== undefined && again !== dir) {
        notFollowed(dir, `the same folder as '${again}'`);
        continue;
      }
      walked.set(found.id, dir);
      if (root && absentRoots.delete(dir)) log.info({ ...fields, path: dir }, `Watcher '${name}' is watching '${dir}' again (it exists again).`);
      ids.set(dir, found.id);
      const folders = await apply(dir, found.listing, report);
      skipLinks(dir, found.listing);
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
    tellSkipped();
    for (const root of roots) if (settings.paths.includes(root) && !absentRoots.has(root)) recorded.add(root);
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
        const [next] = relistQueue as unknown as [string];
        relistQueue.delete(next);
        const found = await look(next);
        if (found === undefined) break;
        if (found.kind === "link") notFollowed(next, "a symbolic link");
        if (found.kind === "unreadable") cannotRead(next, found.code);
        if (found.kind === "link" || found.kind === "unreadable") continue;
        if (found.kind === "folder" && ids.has(next) && ids.get(next) !== found.id) {
          await rewatch(next, "it was replaced: made again, or a filesystem mounted or unmounted on it");
          continue;
        }
        if (found.kind === "missing" && settings.paths.includes(next)) rootAbsent(next);
        if (found.kind === "folder") ids.set(next, found.id);
        const before = new Set(dirs.has(next) ? foldersOf(dirs.get(next) as string) : []);
        const folders = await apply(next, found.kind === "missing" ? undefined : found.listing, true);
        if (found.kind === "folder") skipLinks(next, found.listing);
        tellSkipped();
        // A folder moved in: everything in it is new.
        const added = folders.filter((folder) => !before.has(folder)).map((folder) => join(next, folder));
        if (added.length > 0) await walk(added, true);
      }
    }).finally(() => {
      relisting = undefined;
      scheduleSave();
      if (relistQueue.size > 0) queueRelist([...relistQueue][0] as string);
    });
  }

  /**
   * A folder to watch anew (a watched path back, a folder replaced, a filesystem mounted or unmounted there): its
   * notifications started again and everything under it walked, compared with what was known (a watched path never
   * seen before only records).
   */
  async function rewatch(dir: string, why: string | undefined): Promise<void> {
    for (const known of dirs.keys()) if (known === dir || known.startsWith(`${dir}/`)) kernel?.remove(known);
    kernel?.remove(dir);
    ids.delete(dir);
    const root = settings.paths.includes(dir);
    const wasAbsent = absentRoots.has(dir);
    await walk([dir], !root || recorded.has(dir));
    if (stop.signal.aborted) return;
    // A watched path that exists again says so in the walk.
    if (why !== undefined && !wasAbsent && !absentRoots.has(dir)) log.info({ ...fields, path: dir }, `Watcher '${name}' is watching '${dir}' again (${why}).`);
    if (relistQueue.size > 0) queueRelist([...relistQueue][0] as string);
  }

  /** `events`: the watched paths, the mounts below them and the unreadable folders, looked at again. */
  async function lookAround(): Promise<void> {
    for (const root of settings.paths) {
      if (stop.signal.aborted) return;
      const found = await look(root);
      if (found === undefined) return;
      if (found.kind === "missing") rootAbsent(root);
      else if (found.kind === "unreadable") cannotRead(root, found.code);
      else if (found.kind === "folder" && (absentRoots.has(root) || ids.get(root) !== found.id)) {
        await rewatch(root, "it was replaced: made again, or a filesystem mounted or unmounted on it");
      }
    }
    // A mount point's identity changes with what is mounted there (a mount's id in the table is used again at once).
    const before = mounts ?? [];
    mounts = await options.mountsUnder?.(settings.paths);
    for (const point of new Set([...before, ...(mounts ?? [])])) {
      if (stop.signal.aborted) return;
      const parent = point.slice(0, point.lastIndexOf("/")) || "/";
      if (!dirs.has(parent) || !ids.has(point)) continue;
      const found = await look(point);
      if (found?.kind === "folder" && ids.get(point) !== found.id) await rewatch(point, "a filesystem was mounted or unmounted on it");
    }
    for (const dir of [...unreadable.keys()]) {
      if (stop.signal.aborted) return;
      const found = await look(dir);
      // Readable again (said by the look): what changed in it meanwhile is reported.
      if (found?.kind === "folder") await rewatch(dir, undefined);
    }
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
  async function asSaved(): Promise<ReadonlyMap<string, Listing>> {
    const unsettled = [...settler.pending(), ...[...unstored].map(splitChange)];
    if (unsettled.length === 0) return dirs;
    const saved = new Map(dirs);
    const byDir = new Map<string, typeof unsettled>();
    for (const change of unsettled) {
      const changes = byDir.get(change.dir);
      if (changes) changes.push(change);
      else byDir.set(change.dir, [change]);
    }
    for (const [dir, changes] of byDir) {
      const listing = saved.get(dir) ?? "";
      const files = new Map(filesOf(listing).map((file) => [file.name, file]));
      for (const change of changes) {
        if (change.event === "Created") files.delete(change.name);
        else files.set(change.name, { name: change.name, size: -1, mtimeMs: -1 });
      }
      saved.set(dir, await encodeListingInSlices({ folders: foldersOf(listing), files: [...files.values()] }, yieldTurn));
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
      await saveTreeState(options.stateFile, settings.paths, await asSaved());
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
    if (mode === "events") mounts = await options.mountsUnder?.(settings.paths);
    const every = mode === "events" ? EVENTS_WALK_MS : settings.pollMs;
    let walkAt = clock.now() + every;
    while (!stop.signal.aborted) {
      await clock.sleep(mode === "events" ? Math.min(ROOT_LOOK_MS, walkAt - clock.now()) : every, stop.signal);
      if (stop.signal.aborted) return;
      if (mode === "events" && clock.now() < walkAt) {
        await inLane(() => lookAround());
        scheduleSave();
        continue;
      }
      walkAt = clock.now() + every;
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
