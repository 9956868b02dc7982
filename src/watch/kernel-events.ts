import { watch, type FSWatcher } from "node:fs";

/**
 * `MODE: "events"`: the kernel's change notifications (inotify on Linux), through Node's own `fs.watch` on each folder,
 * never on each file: one inotify watch per folder, whatever number of files it holds. What changed is not taken from
 * the notification: the watcher lists the folder again and compares (`folder-watcher.ts`), which also covers a
 * notification the kernel dropped or merged.
 *
 * One listener serves every folder of a watcher (the folder is kept on the `FSWatcher` itself): a library has tens of
 * thousands of folders, and closures and wrapper objects per folder would cost megabytes.
 *
 * Why not a library: both named in the issue were measured on a tree of 200,000 files in 20,000 folders (tmpfs):
 * chokidar 4 puts a watch on every file and stops at the kernel's limit (ENOSPC at 192,536 watches); @parcel/watcher
 * watches folders but keeps every file's path in its own tree, 57 MB of memory against the 40 MB allowed. `fs.watch`
 * per folder took 31 MB and 0.3 s for the same tree.
 *
 * `add` is the one call on the watched tree made outside the disk probe (inotify has to be asked by this process):
 * it is made only right after the probe listed the folder, and `events` mode is for local disks (FUSE, NFS and SMB
 * send no notifications of others' changes, and the watcher warns to use `poll` there), where it does not hang.
 */
export interface KernelWatch {
  /** Starts the notifications of `dir`; throws as `fs.watch` does (ENOSPC: the kernel's limit of watches). */
  add(dir: string): void;
  remove(dir: string): void;
  has(dir: string): boolean;
  closeAll(): void;
}

/** Makes a watcher's `KernelWatch`: `changed(dir)` on any notification in a folder, `failed(dir, error)` on its errors. */
export type WatchFolders = (changed: (dir: string) => void, failed: (dir: string, error: Error) => void) => KernelWatch;

const DIR = Symbol("autoscan.dir");
type Watched = FSWatcher & { [DIR]: string };

export const watchFoldersWithKernel: WatchFolders = (changed, failed) => {
  const watchers = new Map<string, Watched>();
  function onChange(this: Watched): void {
    changed(this[DIR]);
  }
  function onError(this: Watched, error: Error): void {
    failed(this[DIR], error);
  }
  return {
    add(dir) {
      const watcher = watch(dir, { persistent: false }) as Watched;
      watcher[DIR] = dir;
      watcher.on("change", onChange);
      watcher.on("error", onError);
      watchers.set(dir, watcher);
    },
    remove(dir) {
      watchers.get(dir)?.close();
      watchers.delete(dir);
    },
    has: (dir) => watchers.has(dir),
    closeAll() {
      for (const watcher of watchers.values()) watcher.close();
      watchers.clear();
    },
  };
};
