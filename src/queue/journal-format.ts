import { crc32 } from "node:zlib";
import type { RowChange } from "./rows.ts";

/**
 * One journal line per write transaction: `<crc32 hex> <json>\n`, the JSON being `{"s": seq, "c": [changes]}`.
 * A line whose checksum does not match was torn by a crash (or damaged on disk): it is skipped whole, so a
 * transaction is replayed entirely or not at all. Only a line whose write had not been fsync'd can be torn, and no
 * caller was told such a request was stored.
 */
export interface JournalEntry {
  readonly seq: number;
  readonly changes: readonly RowChange[];
}

export function encodeEntry(entry: JournalEntry): string {
  const json = JSON.stringify({ s: entry.seq, c: entry.changes });
  return `${crc32(json).toString(16).padStart(8, "0")} ${json}\n`;
}

export interface DecodedJournal {
  readonly entries: JournalEntry[];
  /** Lines that failed their checksum or did not parse. */
  readonly damaged: number;
  /** True when the last line was incomplete (a write cut short by a crash). */
  readonly tornTail: boolean;
}

export function decodeJournal(text: string): DecodedJournal {
  const entries: JournalEntry[] = [];
  let damaged = 0;
  const lines = text.split("\n");
  // The text after the last newline is a line whose write never finished.
  const tail = lines.pop() ?? "";
  for (const line of lines) {
    if (line.length === 0) continue;
    const entry = decodeLine(line);
    if (entry) entries.push(entry);
    else damaged++;
  }
  return { entries, damaged, tornTail: tail.length > 0 };
}

function decodeLine(line: string): JournalEntry | undefined {
  const space = line.indexOf(" ");
  if (space !== 8) return undefined;
  const json = line.slice(9);
  if (line.slice(0, 8) !== crc32(json).toString(16).padStart(8, "0")) return undefined;
  try {
    const parsed = JSON.parse(json) as { s?: unknown; c?: unknown };
    if (typeof parsed.s !== "number" || !Array.isArray(parsed.c)) return undefined;
    return { seq: parsed.s, changes: parsed.c as RowChange[] };
  } catch {
    return undefined;
  }
}
