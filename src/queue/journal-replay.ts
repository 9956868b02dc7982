import type { Logger } from "../core/logger.ts";
import { listJournalFiles, readJournalText } from "./journal.ts";
import { decodeJournal } from "./journal-format.ts";
import { createRowAccess } from "./rows.ts";
import type { Database } from "./sql-js.ts";

export interface ReplayResult {
  /** The newest sequence number in the file or the journal. */
  readonly lastSeq: number;
  /** The newest journal generation found (0 when none). */
  readonly lastGeneration: number;
  readonly applied: number;
}

/**
 * Applies the journal lines written after the file's checkpoint (`meta.journal_seq`), oldest generation first. A
 * damaged line is skipped with a warning; a torn last line is a write that was cut by a crash before it was
 * acknowledged, and is dropped silently (debug).
 */
export async function replayJournals(db: Database, file: string, log: Logger): Promise<ReplayResult> {
  const rows = createRowAccess(db);
  const base = Number(rows.get<{ value: string }>("SELECT value FROM meta WHERE key = 'journal_seq'")?.value ?? 0);
  let lastSeq = base;
  let applied = 0;
  const refs = await listJournalFiles(file);
  for (const ref of refs) {
    const decoded = decodeJournal(await readJournalText(ref));
    if (decoded.damaged > 0) {
      const message = `Skipped ${String(decoded.damaged)} damaged line(s) in the queue journal '${ref.path}'.`;
      log.warn({ journal: ref.path, damaged: decoded.damaged }, message);
    }
    if (decoded.tornTail) log.debug({ journal: ref.path }, "Dropped an unfinished last line of the queue journal");
    // One transaction per journal file (a savepoint per line, so a line that does not apply is skipped alone).
    rows.run("BEGIN");
    for (const entry of decoded.entries) {
      if (entry.seq <= base) continue;
      rows.run("SAVEPOINT line");
      try {
        for (const change of entry.changes) rows.apply(change);
        applied++;
      } catch (error) {
        rows.run("ROLLBACK TO line");
        log.warn({ err: error, journal: ref.path, seq: entry.seq }, "Skipped a queue journal line that did not apply");
      }
      rows.run("RELEASE line");
      lastSeq = Math.max(lastSeq, entry.seq);
    }
    rows.run("COMMIT");
  }
  rows.free();
  return { lastSeq, lastGeneration: refs.at(-1)?.generation ?? 0, applied };
}
