import { readFile } from "node:fs/promises";
import type { Logger } from "../../core/logger.ts";
import { listLogFiles } from "./log-file.ts";
import { decodeLog, type LogRecord } from "./log-record.ts";
import { applyChange, type RowAccess } from "./rows.ts";

export interface ReplayReport {
  /** The newest acknowledged write now in the database. */
  readonly lastSeq: number;
  /** The newest log generation found (0: none). */
  readonly lastGeneration: number;
  readonly applied: number;
  /** Complete records that were damaged on disk (skipped). */
  readonly damaged: number;
  /** Acknowledged writes that are missing between the snapshot and the newest record. */
  readonly missing: number;
}

/**
 * Replays the log written after the snapshot (generations from its `generation` on, records with a `seq` above its
 * `seq`), oldest first, each record in
 * its own savepoint. Every intact record counts: a damaged one is skipped and reading goes on after it. When two
 * records carry the same `seq`, the one in the later generation wins (the earlier was a write that failed and was
 * refused, and its number was given to the next write). Every loss is logged with its count.
 */
export async function replayLogs(
  rows: RowAccess,
  file: string,
  base: { readonly seq: number; readonly generation: number },
  log: Logger,
): Promise<ReplayReport> {
  const all = await listLogFiles(file);
  // Generations before the snapshot's own were written before it (they only serve the previous snapshot).
  const refs = all.filter((ref) => ref.generation >= base.generation);
  const baseSeq = base.seq;
  const bySeq = new Map<number, LogRecord>();
  let damaged = 0;
  for (const ref of refs) {
    const decoded = decodeLog(await readFile(ref.path, "utf8"));
    for (const record of decoded.records) bySeq.set(record.seq, record);
    if (decoded.damaged > 0) {
      damaged += decoded.damaged;
      log.error(
        { journal: ref.path, damaged: decoded.damaged },
        `The queue log '${ref.path}' holds ${String(decoded.damaged)} damaged record(s); they were skipped and ` +
          "the intact records after them were replayed.",
      );
    }
    if (decoded.tornTailBytes > 0) {
      log.warn(
        { journal: ref.path, bytes: decoded.tornTailBytes },
        `The queue log '${ref.path}' ends in an incomplete record (${String(decoded.tornTailBytes)} bytes): a write ` +
          "cut short by a crash, never confirmed to its sender — or a log file cut short on disk.",
      );
    }
  }
  const seqs = [...bySeq.keys()].filter((seq) => seq > baseSeq).sort((a, b) => a - b);
  let applied = 0;
  rows.run("BEGIN");
  for (const seq of seqs) {
    const record = bySeq.get(seq);
    if (!record) continue;
    rows.run("SAVEPOINT record");
    try {
      for (const change of record.changes) applyChange(rows, change);
      applied++;
    } catch (error) {
      rows.run("ROLLBACK TO record");
      damaged++;
      log.error({ err: error, seq }, `Skipped queue log record ${String(seq)}: it does not apply`);
    }
    rows.run("RELEASE record");
  }
  rows.run("COMMIT");
  const lastSeq = Math.max(baseSeq, seqs.at(-1) ?? baseSeq);
  const missing = lastSeq - baseSeq - seqs.length;
  if (missing > 0) {
    log.error(
      { file, missing, from: baseSeq + 1, to: lastSeq },
      `${String(missing)} acknowledged write(s) between ${String(baseSeq + 1)} and ${String(lastSeq)} are missing ` +
        `from the queue log beside '${file}' (deleted or damaged files); the requests they held are lost.`,
    );
  }
  return { lastSeq, lastGeneration: Math.max(all.at(-1)?.generation ?? 0, base.generation - 1), applied, damaged, missing };
}
