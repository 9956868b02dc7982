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

/**
 * Folders under a missing anchor are HELD: no file check starts (none is spent), nothing is sent to any target,
 * nothing is recorded; they wait in the queue as they are. Held ids are kept here, in memory, and left out of the
 * queue's due lists (its `skip` set), so they neither block the folders behind them nor wake the loop again and
 * again. When their anchor comes back they are let go and the loop looks again.
 */
export interface AnchorHold {
  /**
   * Up to `limit` due items that may go out now: `fetch` is asked with `inProgress` and the held ids left out; an
   * item it answers that lies under a missing anchor is held, and `fetch` is asked again for the rest.
   */
  take(
    limit: number,
    inProgress: ReadonlySet<number>,
    fetch: (limit: number, skip: ReadonlySet<number>) => Promise<WorkItem[]>,
  ): Promise<WorkItem[]>;
  /**
   * After a file check that did not find every file: whether the item is under an anchor that is missing now (looked
   * at again first). Then the check does not count, and the item is held.
   */
  holdsAfterCheck(item: WorkItem): Promise<boolean>;
  held(): { id: number; anchor: string }[];
  /** Starts listening for anchors coming back (`wake` is called when held folders are let go). */
  start(wake: () => void): void;
  stop(): void;
}

export function createAnchorHold(
  anchors: DispatchAnchors | undefined,
  log: Logger,
  release?: (id: number) => Promise<void>,
): AnchorHold {
  /** Item id → the anchor holding it. */
  const held = new Map<number, string>();
  let unsubscribe: (() => void) | undefined;

  function guardOf(item: WorkItem): string | undefined {
    if (!anchors) return undefined;
    const guard = anchors.guard(item.folder) ?? (item.scanFolder === undefined ? undefined : anchors.guard(item.scanFolder));
    return guard?.anchor;
  }

  function hold(item: WorkItem, anchor: string): void {
    if (held.has(item.id)) return;
    held.set(item.id, anchor);
    log.debug({ id: item.id, anchor }, `Folder '${item.folder}' waits for anchor '${anchor}'.`);
    release?.(item.id).catch((error: unknown) => log.debug({ err: error, id: item.id }, "Could not let go of the folder's claim"));
  }

  return {
    async take(limit, inProgress, fetch) {
      if (!anchors) return fetch(limit, inProgress);
      const out: WorkItem[] = [];
      for (;;) {
        const skip = new Set([...inProgress, ...held.keys(), ...out.map((item) => item.id)]);
        let heldNow = false;
        for (const item of await fetch(limit - out.length, skip)) {
          const anchor = guardOf(item);
          if (anchor === undefined) out.push(item);
          else {
            hold(item, anchor);
            heldNow = true;
          }
        }
        // Each round either holds a new item (left out of the next) or is the last: this ends.
        if (!heldNow || out.length >= limit) return out;
      }
    },
    async holdsAfterCheck(item) {
      if (!anchors) return false;
      await anchors.check?.();
      const anchor = guardOf(item);
      if (anchor === undefined) return false;
      hold(item, anchor);
      return true;
    },
    held: () => [...held].map(([id, anchor]) => ({ id, anchor })),
    start(wake) {
      if (!anchors || unsubscribe) return;
      unsubscribe = anchors.onReturn((anchor) => {
        let count = 0;
        for (const [id, holder] of held) {
          if (holder !== anchor) continue;
          held.delete(id);
          count++;
        }
        if (count > 0) wake();
        return count;
      });
    },
    stop() {
      unsubscribe?.();
      unsubscribe = undefined;
    },
  };
}
