/**
 * What one look at a folder finds (`DiskProbe.list`, run in the mount's helper process): everything a caller needs to
 * know of it, so that nobody looks at a media disk again on its own (on libuv's thread pool, where a mount that stops
 * answering in between would hold a thread).
 */
export interface DirListing {
  /** The folder itself: device, inode and birth time. Two paths with the same id are one folder (a loop); a path
   *  whose id changed holds another folder (made again, or a filesystem mounted or unmounted on it). */
  readonly id: string;
  /** Its subfolders' names (real folders, never links). */
  readonly folders: readonly string[];
  /** Its symbolic links to folders (their target's type is looked at, nothing more). */
  readonly links: readonly string[];
  /** Its files (links to files included) with size (bytes) and mtime (ms). */
  readonly files: readonly { readonly name: string; readonly size: number; readonly mtimeMs: number }[];
}

/** A folder that is there but cannot be listed, with the error's code (EACCES, EPERM, EIO, ENOTCONN …). */
export interface Unreadable {
  readonly unreadable: string;
}

/**
 * `missing`: nothing there (or not a folder); `link`: a symbolic link, when asked not to follow one; `Unreadable`: there
 * and not readable, which is never `missing` (a caller must not take its files for deleted).
 */
export type ListAnswer = DirListing | Unreadable | "missing" | "link";

export const isUnreadable = (answer: ListAnswer | "unanswered"): answer is Unreadable => typeof answer === "object" && "unreadable" in answer;
