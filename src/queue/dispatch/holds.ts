import type { Logger } from "../../core/logger.ts";
import type { WorkItem } from "./dispatch-port.ts";

/**
 * What the dispatcher needs of `SERVER_ANCHORS` (`paths/anchors.ts`, composed with the path mapper by the wiring).
 */
export interface DispatchAnchors {
  /** The missing anchor guarding a folder (server form), from memory; `undefined` when it may go out. */
  guard(serverFolder: string): { readonly anchor: string } | undefined;
  /** Subscribes to anchors coming back; the listener returns how many folders it let go. Returns the unsubscribe. */
  onReturn(listener: (anchor: string) => number): () => void;
  /** Looks at the anchors now (a file check found files missing: maybe the mount has just gone). */
  check?(): Promise<void>;
}

/** What the dispatcher needs of the disk probe (`paths/disk-probe.ts`) to hold folders for a mount that hangs. */
export interface DispatchDisk {
  /** The mount point a local path lies under. */
  mountOf(localPath: string): Promise<string>;
  /** Mounts whose one look has not answered for a while (`DiskProbe.slowMounts`): looks under them wait without one. */
  slowMounts(): string[];
  /** Subscribes to mounts answering again; returns the unsubscribe. */
  onMountAnswers(listener: (mount: string) => void): () => void;
}

/**
 * Folders HELD: they wait in the queue as they are, no file check starts or is spent, nothing is sent to any target,
 * nothing is recorded. Held ids are kept here, in memory, and left out of the queue's due lists (its `skip` set), so
 * they neither block the folders behind them nor wake the loop again and again; when what they wait for is back they
 * are let go and the loop looks again. With several instances a held folder's claim is let go too, as another
 * instance's disk may have what this one lacks. A restart forgets the holds: the first look finds the same again.
 * Two kinds of hold, one pattern:
 *
 * - **anchor**: a folder under a missing anchor (`SERVER_ANCHORS`), found when it is due, or when a check finds files
 *   missing because the mount has just gone. Let go when the anchor comes back.
 * - **mount**: a folder whose file check got no answer from the disk: "unanswered" is not "missing". A mount that is
 *   slow (its one look has not answered for a while) or hung holds its own folders, and neither a check slot nor any
 *   other disk. Let go when the mount answers again, as if nothing had happened. One INFO line when a mount first
 *   holds folders, one when it lets them go; each folder at DEBUG.
 */
export type HoldKind = "anchor" | "mount";

/** What each kind says: of each folder held (DEBUG), and for mounts when one first holds and lets go (INFO). */
const SAY: Record<HoldKind, { each(folder: string, by: string): string; first?(by: string): string; letGo?(by: string, count: number): string }> = {
  anchor: { each: (folder, by) => `Folder '${folder}' waits for anchor '${by}'.` },
  mount: {
    each: (folder, by) => `Folder '${folder}' waits for mount '${by}'.`,
    first: (by) => `Folders under mount '${by}' wait for it to answer (no file check is spent, nothing fails meanwhile).`,
    letGo: (by, count) => `Mount '${by}' answers again: ${String(count)} folder(s) that waited for it are checked now.`,
  },
};

export interface Holds {
  /** Item ids held now (of `kind` alone, when given): left out of the due lists. */
  ids(kind?: HoldKind): Set<number>;
  /** The due `items` that may go out now; those under a missing anchor are held. */
  letOut(items: readonly WorkItem[]): WorkItem[];
  /**
   * After a file check that did not find every file: whether the item is under an anchor that is missing now (looked
   * at again first). Then the check does not count, and the item is held.
   */
  holdForAnchor(item: WorkItem): Promise<boolean>;
  /** Holds `item` for the mount of `local` when that mount does not answer now; false when it is not known hung. */
  holdForMount(item: WorkItem, local: string): Promise<boolean>;
  /** Lets go of the folders whose mount answers again (a look at the probe's list, every dispatch pass). */
  refresh(): void;
  held(kind: HoldKind): { id: number; by: string }[];
  /** Starts listening for anchors coming back and mounts answering again (`wake` when held folders are let go). */
  start(wake: () => void): void;
  stop(): void;
}

export function createHolds(options: {
  readonly anchors: DispatchAnchors | undefined;
  readonly disk: DispatchDisk | undefined;
  readonly log: Logger;
  readonly release?: ((id: number) => Promise<void>) | undefined;
}): Holds {
  const { anchors, disk, log, release } = options;
  /** Item id → what holds it. */
  const held = new Map<number, { readonly kind: HoldKind; readonly by: string }>();
  const unsubscribes: (() => void)[] = [];
  let wake: (() => void) | undefined;
  const idsOf = (kind?: HoldKind): Set<number> =>
    new Set([...held].filter(([, h]) => kind === undefined || h.kind === kind).map(([id]) => id));

  function hold(kind: HoldKind, item: WorkItem, by: string, fields: Record<string, unknown> = {}): void {
    if (held.has(item.id)) return;
    const { each, first } = SAY[kind];
    const firstHeld = ![...held.values()].some((h) => h.kind === kind && h.by === by);
    held.set(item.id, { kind, by });
    if (first && firstHeld) log.info({ [kind]: by, id: item.id }, first(by));
    log.debug({ id: item.id, [kind]: by, ...fields }, each(item.folder, by));
    release?.(item.id).catch((error: unknown) => log.debug({ err: error, id: item.id }, "Could not let go of the folder's claim"));
  }

  /** Lets go of the folders `by` holds; returns how many. */
  function letGo(kind: HoldKind, by: string): number {
    let count = 0;
    for (const [id, holder] of held) {
      if (holder.kind !== kind || holder.by !== by) continue;
      held.delete(id);
      count++;
    }
    if (count === 0) return 0;
    const said = SAY[kind].letGo?.(by, count);
    if (said !== undefined) log.info({ [kind]: by, folders: count }, said);
    wake?.();
    return count;
  }

  function guardOf(item: WorkItem): string | undefined {
    if (!anchors) return undefined;
    const guard = anchors.guard(item.folder) ?? (item.scanFolder === undefined ? undefined : anchors.guard(item.scanFolder));
    return guard?.anchor;
  }

  return {
    ids: idsOf,
    letOut(items) {
      return items.filter((item) => {
        const anchor = guardOf(item);
        if (anchor !== undefined) hold("anchor", item, anchor);
        return anchor === undefined;
      });
    },
    async holdForAnchor(item) {
      if (!anchors) return false;
      await anchors.check?.();
      const anchor = guardOf(item);
      if (anchor === undefined) return false;
      hold("anchor", item, anchor);
      return true;
    },
    async holdForMount(item, local) {
      if (!disk) return false;
      const mount = await disk.mountOf(local);
      if (!disk.slowMounts().includes(mount)) return false;
      hold("mount", item, mount, { path: local });
      return true;
    },
    refresh() {
      if (!disk || held.size === 0) return;
      const hung = new Set(disk.slowMounts());
      for (const mount of new Set([...held.values()].filter((h) => h.kind === "mount").map((h) => h.by))) {
        if (!hung.has(mount)) letGo("mount", mount);
      }
    },
    held: (kind) => [...held].filter(([, h]) => h.kind === kind).map(([id, h]) => ({ id, by: h.by })),
    start(onWake) {
      if (unsubscribes.length > 0) return;
      wake = onWake;
      if (anchors) unsubscribes.push(anchors.onReturn((anchor) => letGo("anchor", anchor)));
      if (disk) unsubscribes.push(disk.onMountAnswers((mount) => void letGo("mount", mount)));
    },
    stop() {
      for (const unsubscribe of unsubscribes.splice(0)) unsubscribe();
    },
  };
}
