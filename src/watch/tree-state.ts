import { readFile } from "node:fs/promises";
import { writeFileDurably } from "../core/durable-file.ts";
import type { Listing } from "./listing.ts";

/**
 * What a watcher knows of its folders: each directory's listing (`listing.ts`), kept on disk after each walk and at
 * a stop, so a restart compares the disk with what was there before it stopped (a change made while autoscan was down
 * is seen; nothing else is rescanned). The file is text, one directory per line (`<path>\t<listing>`), under the data directory: `watch/<name>.state`. A file that is missing, damaged or
 * written for other PATHS reads as "nothing known" (a first start: the walk records, and reports nothing).
 */
export interface TreeState {
  readonly dirs: Map<string, Listing>;
  /** Whether anything was known at start (false: the first walk only records). */
  readonly known: boolean;
}

const HEADER = "autoscan-watch 1";

export async function loadTreeState(file: string, paths: readonly string[]): Promise<TreeState> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch {
    return { dirs: new Map(), known: false };
  }
  // A save always ends with a line break: a file cut short anywhere else is damaged (taken as partial, the folders cut
  // off would be reported as new, everything in them scanned).
  if (!text.endsWith("\n")) return { dirs: new Map(), known: false };
  const lines = text.slice(0, -1).split("\n");
  if (lines[0] !== `${HEADER}\t${JSON.stringify([...paths].sort())}`) return { dirs: new Map(), known: false };
  const dirs = new Map<string, Listing>();
  for (const line of lines.slice(1)) {
    const tab = line.indexOf("\t");
    const dir = line.slice(0, tab);
    if (tab <= 0 || !paths.some((path) => dir === path || dir.startsWith(path.endsWith("/") ? path : `${path}/`))) return { dirs: new Map(), known: false };
    dirs.set(dir, line.slice(tab + 1));
  }
  return { dirs, known: true };
}

export async function saveTreeState(file: string, paths: readonly string[], dirs: ReadonlyMap<string, Listing>): Promise<void> {
  // Written in pieces, never as one string: a tree of 200,000 files is a 9 MB file, and a copy of it in memory would
  // grow the heap for good.
  function* pieces(): Generator<string> {
    let chunk = `${HEADER}\t${JSON.stringify([...paths].sort())}\n`;
    for (const [dir, listing] of dirs) {
      chunk += `${dir}\t${listing}\n`;
      if (chunk.length >= 64 * 1024) {
        yield chunk;
        chunk = "";
      }
    }
    yield chunk;
  }
  await writeFileDurably(file, pieces());
}
