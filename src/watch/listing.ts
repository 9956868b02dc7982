import type { DirListing } from "../paths/dir-listing.ts";

/** What a listing keeps of the disk's answer: folders and files (links to folders are not followed, so not kept). */
type Entries = Pick<DirListing, "folders" | "files">;

/**
 * One directory as the watcher remembers it, kept as a single string per directory (a tree of 200,000 files in 20,000
 * folders is about 10 MB this way; objects per file would be several times that): its subfolders (`name/`) and its
 * files (`name`, size and mtime), one entry each (separated by \u0001), sorted, so two walks of an unchanged folder give the same string.
 */
export type Listing = string;

export interface FileEntry {
  readonly name: string;
  readonly size: number;
  readonly mtimeMs: number;
}

/** What changed in one directory between two listings. */
export interface ListingChanges {
  /** Files that are new, or whose size or mtime changed. */
  readonly changed: readonly FileEntry[];
  /** The names of the new ones among them. */
  readonly created: ReadonlySet<string>;
  /** Files that are gone. */
  readonly removed: readonly string[];
  readonly newFolders: readonly string[];
  readonly goneFolders: readonly string[];
}

const SEP = "\u0000";
/** Between entries: a character no name kept here holds, and no line break, so the state file stores a listing as it is. */
const LINE = "\u0001";

/** Names with a line break, a tab or \u0001 (which the listing and its file use as separators) are left out. */
export function encodeListing(listing: Entries): Listing {
  const lines = [
    ...listing.folders.filter(plainName).map((name) => `${name}/`),
    ...listing.files.filter((file) => plainName(file.name)).map((file) => `${file.name}${SEP}${String(file.size)}${SEP}${String(file.mtimeMs)}`),
  ];
  return lines.sort().join(LINE);
}

/** The subfolders a listing keeps, from the disk's answer (names with a separator in them are left out). */
export function keptFolders(listing: Entries): string[] {
  return listing.folders.filter(plainName);
}

/** The subfolders' names of a listing. */
export function foldersOf(listing: Listing): string[] {
  return lines(listing).filter((line) => line.endsWith("/") && !line.includes(SEP)).map((line) => line.slice(0, -1));
}

export function filesOf(listing: Listing): FileEntry[] {
  return lines(listing).flatMap((line) => {
    const [name, size, mtime] = line.split(SEP);
    return name !== undefined && size !== undefined && mtime !== undefined ? [{ name, size: Number(size), mtimeMs: Number(mtime) }] : [];
  });
}

/** How many files a listing holds (each file line has two separators). */
export function fileCountOf(listing: Listing): number {
  let count = 0;
  for (let at = listing.indexOf(SEP); at >= 0; at = listing.indexOf(SEP, at + 1)) count++;
  return count / 2;
}

export function diffListings(before: Listing | undefined, after: Listing): ListingChanges {
  if (before === after) return { changed: [], created: new Set(), removed: [], newFolders: [], goneFolders: [] };
  const old = new Map(filesOf(before ?? "").map((file) => [file.name, file]));
  const now = filesOf(after);
  const nowNames = new Set(now.map((file) => file.name));
  const oldFolders = new Set(foldersOf(before ?? ""));
  const nowFolders = new Set(foldersOf(after));
  const created = new Set<string>();
  return {
    changed: now.filter((file) => {
      const was = old.get(file.name);
      if (was === undefined) created.add(file.name);
      return was === undefined || was.size !== file.size || was.mtimeMs !== file.mtimeMs;
    }),
    created,
    removed: [...old.keys()].filter((name) => !nowNames.has(name)),
    newFolders: [...nowFolders].filter((name) => !oldFolders.has(name)),
    goneFolders: [...oldFolders].filter((name) => !nowFolders.has(name)),
  };
}

const lines = (listing: Listing): string[] => (listing === "" ? [] : listing.split(LINE));

const plainName = (name: string): boolean => !/[\n\t\u0001]/.test(name);
