import type { Logger } from "../../core/logger.ts";
import type { WorkItem } from "./dispatch-port.ts";

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
 * Folders whose file check got no answer from the disk wait for their mount: "unanswered" is not "missing". No check
 * is spent and nothing is recorded; the folder is left out of the due lists (in memory, as the anchor hold does) until
 * its mount answers again, then it is checked as if nothing had happened. A mount that is slow (its one look has not
 * answered for a while) or hung holds its own folders this way, and neither a check slot nor any other disk. One INFO line when a mount first holds
 * folders, one when it lets them go; each folder at DEBUG. A restart forgets the hold: the first look finds the mount
 * hung again at once.
 */
export interface MountHold {
  hold(item: WorkItem, localPath: string): Promise<void>;
  /** Item ids held now (left out of the due lists). */
  ids(): ReadonlySet<number>;
  held(): { id: number; mount: string }[];
  /** Lets go of the folders whose mount answers again (a look at the probe's list, every dispatch pass). */
  refresh(): void;
  start(wake: () => void): void;
  stop(): void;
}

export function createMountHold(disk: DispatchDisk | undefined, log: Logger, release?: (id: number) => Promise<void>): MountHold | undefined {
  if (!disk) return undefined;
  /** Item id → the mount it waits for. */
  const held = new Map<number, string>();
  let unsubscribe: (() => void) | undefined;
  let wake: (() => void) | undefined;

  function letGo(mount: string): void {
    let count = 0;
    for (const [id, holder] of held) {
      if (holder !== mount) continue;
      held.delete(id);
      count++;
    }
    if (count === 0) return;
    log.info({ mount, folders: count }, `Mount '${mount}' answers again: ${String(count)} folder(s) that waited for it are checked now.`);
    wake?.();
  }

  return {
    async hold(item, localPath) {
      const mount = await disk.mountOf(localPath);
      if (held.has(item.id)) return;
      const first = ![...held.values()].includes(mount);
      held.set(item.id, mount);
      if (first) {
        log.info(
          { mount, id: item.id },
          `Folders under mount '${mount}' wait for it to answer (no file check is spent, nothing fails meanwhile).`,
        );
      }
      log.debug({ id: item.id, mount, path: localPath }, `Folder '${item.folder}' waits for mount '${mount}'.`);
      // Several instances: another one's disk may answer.
      release?.(item.id).catch((error: unknown) => log.debug({ err: error, id: item.id }, "Could not let go of the folder's claim"));
    },
    ids: () => new Set(held.keys()),
    held: () => [...held].map(([id, mount]) => ({ id, mount })),
    refresh() {
      if (held.size === 0) return;
      const hung = new Set(disk.slowMounts());
      for (const mount of new Set(held.values())) if (!hung.has(mount)) letGo(mount);
    },
    start(onWake) {
      wake = onWake;
      unsubscribe ??= disk.onMountAnswers(letGo);
    },
    stop() {
      unsubscribe?.();
      unsubscribe = undefined;
    },
  };
}
