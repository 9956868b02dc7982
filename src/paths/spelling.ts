import type { DiskEntry } from "./disk-probe.ts";
import { hasNonAscii } from "./normalize.ts";

/**
 * One name, two Unicode spellings: "é" is one code point in NFC (Linux, Windows, most *arr databases) and "e" plus a
 * combining accent in NFD (macOS, SMB shares written from a Mac). Linux compares names byte for byte, so a folder
 * written in NFD is not found under its NFC bytes, nor the other way round. We keep the bytes we received, and when
 * a name is not on disk as received we look for its other spelling before we give up; the spelling found on disk is
 * the one that is scanned.
 */

/** The spellings of a name (or a path) worth trying on disk: as received first, then NFC, then NFD, each once. */
export function spellingsOf(text: string): string[] {
  if (!hasNonAscii(text)) return [text];
  return [...new Set([text, text.normalize("NFC"), text.normalize("NFD")])];
}

export interface FoundSpelling {
  /** The path as spelled on disk (as asked when it was not found, or when the disk did not answer). */
  readonly path: string;
  readonly entry: DiskEntry;
}

/**
 * Looks a local path up as received; when it is missing and has non-ASCII names, under the whole path's other
 * spellings (NFC, NFD), then name by name (a folder made on Linux holding a file copied from a Mac). A stat that goes
 * unanswered ends the lookup: the mount is not answering, and another spelling would wait just the same.
 */
export async function findSpelling(path: string, statPath: (path: string) => Promise<DiskEntry>): Promise<FoundSpelling> {
  const asked = await statPath(path);
  if (asked !== "missing" || !hasNonAscii(path)) return { path, entry: asked };
  for (const other of spellingsOf(path).slice(1)) {
    const entry = await statPath(other);
    if (entry === "unanswered") return { path, entry };
    if (entry !== "missing") return { path: other, entry };
  }
  return findNameByName(path, statPath);
}

/**
 * Name by name, from the root: ASCII names are taken as they are (no stat: they have one spelling), each other name
 * under the first of its spellings that exists. Only worth it with two or more non-ASCII names: with one, the whole-path
 * spellings already tried every combination.
 */
async function findNameByName(path: string, statPath: (path: string) => Promise<DiskEntry>): Promise<FoundSpelling> {
  const names = path.split("/");
  if (names.filter(hasNonAscii).length < 2) return { path, entry: "missing" };
  let built = names[0] ?? "";
  let last: DiskEntry | undefined;
  for (const name of names.slice(1)) {
    if (!hasNonAscii(name)) {
      built = `${built}/${name}`;
      last = undefined;
      continue;
    }
    let found: string | undefined;
    for (const spelling of spellingsOf(name)) {
      const entry = await statPath(`${built}/${spelling}`);
      if (entry === "unanswered") return { path, entry };
      if (entry === "missing") continue;
      found = spelling;
      last = entry;
      break;
    }
    if (found === undefined) return { path, entry: "missing" };
    built = `${built}/${found}`;
  }
  if (built === path) return { path, entry: "missing" };
  const entry = last ?? (await statPath(built));
  return entry === "missing" || entry === "unanswered" ? { path, entry } : { path: built, entry };
}

/**
 * Carries the spelling found on disk back to the server path: `asked` is the local form that was looked up, `found`
 * the same path as spelled on disk. Only the names the two share with the server path at its end (the part after the
 * mapped prefix) are respelled; a name respelled inside the local prefix is autoscan's own mount, not the server's.
 */
export function carrySpelling(serverPath: string, asked: string, found: string): string {
  if (asked === found) return serverPath;
  const server = serverPath.split("/");
  const a = asked.split("/");
  const f = found.split("/");
  if (a.length !== f.length) return serverPath;
  for (let i = 1; i <= a.length && i <= server.length; i++) {
    const askedName = a[a.length - i];
    if (server[server.length - i] !== askedName) break;
    server[server.length - i] = f[f.length - i] ?? "";
  }
  return server.join("/");
}
