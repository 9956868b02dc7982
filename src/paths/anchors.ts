import type { Clock } from "../core/clock.ts";
import type { Logger } from "../core/logger.ts";
import type { DiskEntry } from "./disk-probe.ts";
import { isWindowsPath, normalizePath, parentFolder, withTrailingSlash } from "./normalize.ts";

/**
 * `SERVER_ANCHORS`: files on autoscan's own disk that are there only while the mount holding them is up. Each
 * guards the folder it lies in (`/mnt/remote/Media/.anchor` guards `/mnt/remote/Media`) and everything below it.
 * While an anchor is missing, nothing under its folder is scanned and no trash is emptied there: a mount that
 * dropped makes every file under it look deleted, and a media server told to scan then forgets the library.
 *
 * - An anchor is looked at every `intervalMs` (5 s) through the process's disk probe: a look the disk does not
 *   answer in time (a hung mount) counts as missing, like a missing file.
 * - Until its first look, an anchor guards as if missing (nothing goes out before we know); a first look that
 *   finds it lets its folders go without a word, one that does not find it logs the warning below.
 * - One WARN line when an anchor goes missing, one INFO line when it is back: never a line per look.
 * - `guardOf` answers from memory and never waits on the disk. It holds a path under a guarded folder, and also a
 *   path that holds a guarded folder (a scan of `/mnt/remote` would find `Media` empty just the same).
 * Paths are compared on whole segments, in NFC (as `mapping.ts` does); Windows-style paths case-insensitively.
 */
export interface AnchorWatchOptions {
  /** `SERVER_ANCHORS`: anchor files as autoscan sees them. */
  readonly anchors: readonly string[];
  /** What is at a local path: the process's `DiskProbe` (`unanswered` = the mount did not answer in time). */
  readonly stat: (localPath: string) => Promise<DiskEntry>;
  readonly clock: Clock;
  readonly log: Logger;
  /** How often every anchor is looked at (default 5 s). */
  readonly intervalMs?: number;
}

export interface AnchorGuard {
  /** The anchor file whose absence holds the path. */
  readonly anchor: string;
}

export interface MissingAnchor {
  readonly anchor: string;
  /** When it was found missing (ms since the epoch); for an anchor not looked at yet, when the watch began. */
  readonly since: number;
}

/** Told that an anchor is back; returns how many folders it had held (for the log line), if it knows. */
export type AnchorReturnListener = (anchor: string) => number | void;

export interface AnchorWatch {
  /** The missing anchor guarding a local path, from memory; `undefined` when the path may be used. */
  guardOf(localPath: string): AnchorGuard | undefined;
  /** Looks at every anchor now; concurrent calls share one look. Never rejects. */
  check(): Promise<void>;
  /** Looks now, then every `intervalMs`, until `stop`. */
  start(): void;
  stop(): void;
  /** Subscribes to anchors coming back (also after a first look that found them); returns the unsubscribe. */
  onReturn(listener: AnchorReturnListener): () => void;
  /** The anchors guarding now (missing, or not looked at yet). */
  missing(): MissingAnchor[];
  /**
   * New `SERVER_ANCHORS` (a config reload). An anchor no longer listed stops guarding at once (its listeners are told,
   * as when it comes back); a new one guards until its first look, which starts now; the others keep their state.
   */
  reconfigure(anchors: readonly string[]): void;
}

export const DEFAULT_ANCHOR_INTERVAL_MS = 5_000;

interface Anchor {
  readonly path: string;
  /** The guarded folder as written (for messages). */
  readonly folder: string;
  /** The guarded folder's comparison form: NFC, trailing `/`, lower case for a Windows path. */
  readonly prefix: string;
  readonly folded: boolean;
  /** `unseen` until the first look. */
  state: "unseen" | "present" | "missing";
  since: number;
}

export function createAnchorWatch(options: AnchorWatchOptions): AnchorWatch {
  const { clock } = options;
  const log = options.log.child({ component: "ANCHOR" });
  const intervalMs = Math.max(1, options.intervalMs ?? DEFAULT_ANCHOR_INTERVAL_MS);
  const makeAnchor = (path: string): Anchor => {
    const folder = parentFolder(normalizeFolderSeparators(path));
    const folded = isWindowsPath(path);
    return { path, folder, prefix: comparable(folder, folded), folded, state: "unseen", since: clock.now() };
  };
  let anchors: Anchor[] = [...new Set(options.anchors)].map(makeAnchor);
  const listeners = new Set<AnchorReturnListener>();
  let looking: Promise<void> | undefined;
  let stopper: AbortController | undefined;
  /** `start` was called and `stop` was not: a reload that adds the first anchors starts the looks. */
  let wanted = false;

  const guarding = (anchor: Anchor): boolean => anchor.state !== "present";

  function returned(anchor: Anchor, wasMissing: boolean): void {
    let held = 0;
    for (const listener of [...listeners]) {
      try {
        held += listener(anchor.path) ?? 0;
      } catch (error) {
        log.error({ err: error, anchor: anchor.path }, "A listener for a returning anchor failed");
      }
    }
    if (!wasMissing) return;
    const seconds = Math.round((clock.now() - anchor.since) / 1000);
    const news = held > 0 ? `${held} held folder(s) go out now` : "scans under it go on";
    log.info({ anchor: anchor.path, folder: anchor.folder, held, seconds }, `Anchor '${anchor.path}' is back after ${seconds} s: ${news}.`);
  }

  function seen(anchor: Anchor, entry: DiskEntry): void {
    const present = entry === "file" || entry === "directory";
    const before = anchor.state;
    if (present) {
      if (before === "present") return;
      anchor.state = "present";
      returned(anchor, before === "missing");
      return;
    }
    if (before === "missing") return;
    anchor.state = "missing";
    anchor.since = clock.now();
    const why = entry === "unanswered" ? "the disk did not answer" : before === "unseen" ? "not found at start" : "gone";
    log.warn(
      { anchor: anchor.path, folder: anchor.folder, why },
      `Anchor '${anchor.path}' is missing: scans of folders under '${anchor.folder}' wait until it is back (is the mount down?)`,
    );
  }

  async function lookAtAll(): Promise<void> {
    await Promise.all(
      anchors.map(async (anchor) => {
        // The probe never rejects; anything else that does counts as "not there", which only holds scans back.
        const entry = await options.stat(anchor.path).catch((): DiskEntry => "missing");
        // A reload during the look may have dropped the anchor: its answer is no news then.
        if (anchors.includes(anchor)) seen(anchor, entry);
      }),
    );
  }

  function check(): Promise<void> {
    looking ??= lookAtAll().finally(() => {
      looking = undefined;
    });
    return looking;
  }

  async function loop(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      await check();
      await clock.sleep(intervalMs, signal);
    }
  }

  function startLooking(): void {
    if (stopper || !wanted || anchors.length === 0) return;
    stopper = new AbortController();
    void loop(stopper.signal);
  }

  return {
    guardOf(localPath) {
      if (anchors.length === 0) return undefined;
      const plain = withTrailingSlash(normalizePath(localPath));
      for (const anchor of anchors) {
        if (!guarding(anchor)) continue;
        const path = anchor.folded ? plain.toLowerCase() : plain;
        if (path.startsWith(anchor.prefix) || anchor.prefix.startsWith(path)) return { anchor: anchor.path };
      }
      return undefined;
    },
    check,
    start() {
      wanted = true;
      startLooking();
    },
    stop() {
      wanted = false;
      stopper?.abort();
      stopper = undefined;
    },
    onReturn(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    missing: () => anchors.filter(guarding).map((anchor) => ({ anchor: anchor.path, since: anchor.since })),
    reconfigure(next) {
      const kept = new Map(anchors.map((anchor) => [anchor.path, anchor]));
      const listed = [...new Set(next)];
      const dropped = anchors.filter((anchor) => !listed.includes(anchor.path));
      anchors = listed.map((path) => kept.get(path) ?? makeAnchor(path));
      for (const anchor of dropped) {
        if (!guarding(anchor)) continue;
        log.info({ anchor: anchor.path }, `Anchor '${anchor.path}' is no longer in SERVER_ANCHORS: scans under '${anchor.folder}' go on.`);
        returned(anchor, false);
      }
      if (anchors.some((anchor) => anchor.state === "unseen")) void check();
      if (anchors.length === 0) {
        stopper?.abort();
        stopper = undefined;
      } else startLooking();
    },
  };
}

/**
 * Server form → the missing anchor guarding any of its local forms (`localForms` of the path mapper): what the
 * dispatcher and the trash guard ask about a folder in the media server's form.
 */
export function guardServerPath(
  watch: Pick<AnchorWatch, "guardOf">,
  localForms: (serverPath: string) => readonly string[],
): (serverPath: string) => AnchorGuard | undefined {
  return (serverPath) => {
    for (const local of localForms(serverPath)) {
      const guard = watch.guardOf(local);
      if (guard) return guard;
    }
    return undefined;
  };
}

function normalizeFolderSeparators(path: string): string {
  return isWindowsPath(path) ? path.replace(/\\/g, "/") : path;
}

function comparable(folder: string, folded: boolean): string {
  const form = withTrailingSlash(normalizePath(folder));
  return folded ? form.toLowerCase() : form;
}
