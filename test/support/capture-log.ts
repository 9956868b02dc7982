import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import type { Logger } from "../../src/core/logger.ts";

export interface LogRecord {
  readonly level: number;
  readonly msg: string;
  readonly component?: string;
  readonly [key: string]: unknown;
}

/** A real pino logger whose JSON lines are kept in memory, for assertions on the words users grep. */
export function captureLog(level: pino.Level = "debug"): { log: Logger; records: LogRecord[]; messages(): string[] } {
  const records: LogRecord[] = [];
  const log = pino({ level }, { write: (line: string) => records.push(JSON.parse(line) as LogRecord) });
  return { log, records, messages: () => records.map((r) => r.msg) };
}

/** A fresh folder under the OS temp dir, removed by the returned function. */
export async function makeTempDir(prefix = "autoscan-test-"): Promise<{ dir: string; cleanup(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}
