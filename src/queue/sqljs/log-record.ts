import { crc32 } from "node:zlib";
import type { RowChange } from "./rows.ts";

/**
 * One log record per write: a line `<crc32 hex> <json>\n`, the JSON being `{"s": seq, "c": [changes]}`. JSON never
 * holds a raw newline, so records are self-delimiting: a damaged record (bad checksum, bytes overwritten, a torn write
 * in the middle of a file) is skipped alone and reading goes on at the next line. `seq` counts the writes that were
 * acknowledged: gaps at replay are acknowledged writes that are missing.
 */
export interface LogRecord {
  readonly seq: number;
  readonly changes: readonly RowChange[];
}

export function encodeRecord(record: LogRecord): Buffer {
  const json = JSON.stringify({ s: record.seq, c: record.changes });
  return Buffer.from(`${crc32(json).toString(16).padStart(8, "0")} ${json}\n`, "utf8");
}

export interface DecodedLog {
  readonly records: LogRecord[];
  /** Complete lines that failed their checksum or did not parse. */
  readonly damaged: number;
  /** Bytes after the last newline: a write cut short (never acknowledged), or a file cut short. */
  readonly tornTailBytes: number;
}

export function decodeLog(text: string): DecodedLog {
  const records: LogRecord[] = [];
  let damaged = 0;
  const lines = text.split("\n");
  const tail = lines.pop() ?? "";
  for (const line of lines) {
    // NUL bytes are what a file extended past its last write holds: not a record, not damage of one.
    if (line.length === 0 || /^\0+$/.test(line)) continue;
    const record = decodeLine(line);
    if (record) records.push(record);
    else damaged++;
  }
  return { records, damaged, tornTailBytes: Buffer.byteLength(tail.replace(/\0+$/, ""), "utf8") };
}

function decodeLine(line: string): LogRecord | undefined {
  // A record may follow garbage on the same line (bytes damaged on disk before it): try every place one may start.
  for (const match of line.matchAll(/[0-9a-f]{8} \{/g)) {
    const record = decodeAt(line.slice(match.index));
    if (record) return record;
  }
  return undefined;
}

function decodeAt(text: string): LogRecord | undefined {
  const json = text.slice(9);
  if (text.slice(0, 8) !== crc32(json).toString(16).padStart(8, "0")) return undefined;
  try {
    const parsed = JSON.parse(json) as { s?: unknown; c?: unknown };
    if (typeof parsed.s !== "number" || !Array.isArray(parsed.c)) return undefined;
    return { seq: parsed.s, changes: parsed.c as RowChange[] };
  } catch {
    return undefined;
  }
}
