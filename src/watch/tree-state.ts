import { readFile } from "node:fs/promises";
import { writeFileDurably } from "../core/durable-file.ts";
import type { Listing } from "./listing.ts";

/**
 * What a watcher knows of its folders: each directory's listing (`listing.ts`), kept on disk after each walk and at
 * a stop, so a restart compares the disk with what was there before it stopped (a change made while autoscan was down
 * is seen; nothing else is rescanned). The file is text, one directory per line (`<path>\t<listing>`, the listing's
 * line breaks written as `\u0001`), under the data directory: `watch/<name>.state`. A file that is missing, damaged or
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
    dirs.set(dir, line.slice(tab + 1).replaceAll("\u0001", "\n"));
  }
  return { dirs, known: true };
}

export async function saveTreeState(file: string, paths: readonly string[], dirs: ReadonlyMap<string, Listing>): Promise<void> {
  const lines = [`${HEADER}\t${JSON.stringify([...paths].sort())}`];
  for (const [dir, listing] of dirs) lines.push(`${dir}\t${listing.replaceAll("\n", "\u0001")}`);
  await writeFileDurably(file, `${lines.join("\n")}\n`);
}
