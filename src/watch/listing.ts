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

/**
 * A turn of the event loop between two slices of a long listing (50,000 files in one folder must not hold webhooks
 * and /health while it is encoded or compared).
 */
export type Turn = () => Promise<void>;

/** Entries handled between two turns. */
const SLICE = 1_000;

/** Names with a line break, a tab or \u0001 (which the listing and its file use as separators) are left out. */
export function encodeListing(listing: Entries): Listing {
  return runNow(encodeSteps(listing));
}

/** `encodeListing`, a slice of entries at a time with a `turn` between. */
export function encodeListingInSlices(listing: Entries, turn: Turn): Promise<Listing> {
  return runInSlices(encodeSteps(listing), turn);
}

function* encodeSteps(listing: Entries): Generator<void, Listing> {
  const lines = listing.folders.filter(plainName).map((name) => `${name}/`);
  for (const [index, file] of listing.files.entries()) {
    if (plainName(file.name)) lines.push(`${file.name}${SEP}${String(file.size)}${SEP}${String(file.mtimeMs)}`);
    if (index % SLICE === SLICE - 1) yield;
  }
  return (yield* sortSteps(lines)).join(LINE);
}

/**
 * `lines` in the order `sort()` gives strings (by UTF-16 code units), a slice at a time: runs of a slice sorted, then
 * merged two by two (one sort of 50,000 names is a stretch of ~70 ms).
 */
function* sortSteps(lines: readonly string[]): Generator<void, string[]> {
  let runs: string[][] = [];
  for (let at = 0; at < lines.length; at += SLICE) {
    runs.push(lines.slice(at, at + SLICE).sort());
    yield;
  }
  while (runs.length > 1) {
    const merged: string[][] = [];
    for (let at = 0; at < runs.length; at += 2) {
      const [a, b] = [runs[at] as string[], runs[at + 1]];
      merged.push(b === undefined ? a : yield* mergeSteps(a, b));
    }
    runs = merged;
  }
  return runs[0] ?? [];
}

function* mergeSteps(a: readonly string[], b: readonly string[]): Generator<void, string[]> {
  const out: string[] = [];
  let [i, j] = [0, 0];
  while (i < a.length && j < b.length) {
    out.push((a[i] as string) <= (b[j] as string) ? (a[i++] as string) : (b[j++] as string));
    if (out.length % SLICE === 0) yield;
  }
  for (; i < a.length; i++) out.push(a[i] as string);
  for (; j < b.length; j++) out.push(b[j] as string);
  return out;
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
  return runNow(fileSteps(listing));
}

function* fileSteps(listing: Listing): Generator<void, FileEntry[]> {
  const files: FileEntry[] = [];
  for (const [index, line] of lines(listing).entries()) {
    const [name, size, mtime] = line.split(SEP);
    if (name !== undefined && size !== undefined && mtime !== undefined) files.push({ name, size: Number(size), mtimeMs: Number(mtime) });
    if (index % SLICE === SLICE - 1) yield;
  }
  return files;
}

/** How many files a listing holds (each file line has two separators). */
export function fileCountOf(listing: Listing): number {
  let count = 0;
  for (let at = listing.indexOf(SEP); at >= 0; at = listing.indexOf(SEP, at + 1)) count++;
  return count / 2;
}

export function diffListings(before: Listing | undefined, after: Listing): ListingChanges {
  return runNow(diffSteps(before, after));
}

/** `diffListings`, a slice of entries at a time with a `turn` between. */
export function diffListingsInSlices(before: Listing | undefined, after: Listing, turn: Turn): Promise<ListingChanges> {
  return runInSlices(diffSteps(before, after), turn);
}

function* diffSteps(before: Listing | undefined, after: Listing): Generator<void, ListingChanges> {
  if (before === after) return { changed: [], created: new Set(), removed: [], newFolders: [], goneFolders: [] };
  const old = new Map<string, FileEntry>();
  for (const [index, file] of (yield* fileSteps(before ?? "")).entries()) {
    old.set(file.name, file);
    if (index % SLICE === SLICE - 1) yield;
  }
  const nowNames = new Set<string>();
  const changed: FileEntry[] = [];
  const created = new Set<string>();
  for (const [index, file] of (yield* fileSteps(after)).entries()) {
    nowNames.add(file.name);
    const was = old.get(file.name);
    if (was === undefined) created.add(file.name);
    if (was === undefined || was.size !== file.size || was.mtimeMs !== file.mtimeMs) changed.push(file);
    if (index % SLICE === SLICE - 1) yield;
  }
  const removed: string[] = [];
  for (const name of old.keys()) if (!nowNames.has(name)) removed.push(name);
  yield;
  const oldFolders = new Set(foldersOf(before ?? ""));
  const nowFolders = new Set(foldersOf(after));
  return {
    changed,
    created,
    removed,
    newFolders: [...nowFolders].filter((name) => !oldFolders.has(name)),
    goneFolders: [...oldFolders].filter((name) => !nowFolders.has(name)),
  };
}

/** Runs a listing's steps at once (a small listing, or a caller with no turn to give). */
function runNow<T>(steps: Generator<void, T>): T {
  for (;;) {
    const step = steps.next();
    if (step.done === true) return step.value;
  }
}

async function runInSlices<T>(steps: Generator<void, T>, turn: Turn): Promise<T> {
  for (;;) {
    const step = steps.next();
    if (step.done === true) return step.value;
    await turn();
  }
}

const lines = (listing: Listing): string[] => (listing === "" ? [] : listing.split(LINE));

const plainName = (name: string): boolean => !/[\n\t\u0001]/.test(name);
