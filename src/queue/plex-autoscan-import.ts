import { readFile, rename, rm, stat } from "node:fs/promises";
import { writeFileDurably } from "../core/durable-file.ts";
import type { Logger } from "../core/logger.ts";
import type { ScanRequest } from "../core/scan.ts";
import { openPlexAutoscanQueue, type PlexAutoscanQueue, type UnreadableIds } from "./plex-autoscan-file.ts";

/**
 * plex_autoscan's queue, moved over (the file is read by `plex-autoscan-file.ts`): its rows go into the queue in
 * batches, each one store write, so the import never holds the event loop and a webhook that arrives meanwhile is
 * answered at once. Where it got to is kept in `<queue file>.plex_autoscan.import` after each batch: a restart goes
 * on from there (a batch stored twice merges: the same request again adds nothing). A damaged file gives what can be
 * read of it, and the summary says which ids could not be.
 */

/** What an import did, for its last log line and `autoscan import`'s summary. */
export interface ImportSummary {
  /** Rows read from the file in this run. */
  readonly rows: number;
  /** Requests stored as new waiting folders (or paths, for the file checks to place). */
  readonly queued: number;
  /** Requests that joined a folder already waiting (or were the same request again). */
  readonly merged: number;
  /** Rows whose path is not a full path. */
  readonly skipped: number;
  /** Ids of a damaged file that could not be read (empty: every row was read). */
  readonly unreadable: readonly UnreadableIds[];
}

export interface ImportProgress {
  readonly done: number;
  /** Undefined when damage hides the file's row count. */
  readonly total: number | undefined;
}

export interface ImportOptions {
  readonly source: PlexAutoscanQueue;
  /** Stores one batch (one store write; no look at the disk); answers, per request, whether it merged. */
  readonly store: (requests: readonly ScanRequest[]) => Promise<readonly { readonly merged: boolean }[]>;
  /** Rows already imported by an earlier run (by rowid). */
  readonly afterRowid?: number;
  /** Hears each stored batch: the rowid reached (to keep), rows done so far (earlier runs included). */
  readonly onBatch?: (lastRowid: number, progress: ImportProgress) => Promise<void> | void;
  readonly batchSize?: number;
  readonly signal?: AbortSignal;
}

/** Streams the file's rows into the queue, one batch per store write. */
export async function importPlexAutoscanQueue(options: ImportOptions): Promise<ImportSummary> {
  const { source } = options;
  const size = options.batchSize ?? 500;
  let lastRowid = options.afterRowid ?? 0;
  const before = lastRowid > 0 ? (source.countThrough(lastRowid) ?? 0) : 0;
  const unreadable: UnreadableIds[] = [];
  let rows = 0;
  let queued = 0;
  let merged = 0;
  let skipped = 0;
  let batch: ScanRequest[] = [];
  let batchEnd = lastRowid;
  const flush = async (): Promise<void> => {
    if (batch.length > 0) {
      const outcome = await options.store(batch);
      for (const item of outcome) {
        if (item.merged) merged += 1;
        else queued += 1;
      }
    }
    batch = [];
    lastRowid = batchEnd;
    await options.onBatch?.(lastRowid, { done: before + rows, total: source.total });
  };
  for (const row of source.rows(lastRowid)) {
    if (options.signal?.aborted) break;
    if ("unreadable" in row) {
      unreadable.push(row.unreadable);
      continue;
    }
    rows += 1;
    batchEnd = row.rowid;
    if (row.request) batch.push(row.request);
    else skipped += 1;
    if (rows % size === 0) await flush();
  }
  if (!options.signal?.aborted && batchEnd !== lastRowid) await flush();
  return { rows, queued, merged, skipped, unreadable };
}

const count = (n: number): string => n.toLocaleString("en-US");
const SHOWN_STRETCHES = 5;

/**
 * What a damaged file lost, for the summary lines (with a leading space; empty when every row was read). The ids
 * between two rows read are counted as lost ("up to": plex_autoscan numbers its rows in turn, but a row scanned before
 * the move left its id unused); ids past the last row read are not counted, as the file no longer says how many were.
 */
export function describeDamage(summary: ImportSummary): string {
  if (summary.unreadable.length === 0) return "";
  const between = summary.unreadable.flatMap((ids) => (ids.until === undefined ? [] : [{ first: ids.after + 1, last: ids.until - 1 }]));
  const tail = summary.unreadable.find((ids) => ids.until === undefined);
  const lost = between.reduce((sum, ids) => sum + ids.last - ids.first + 1, 0);
  const shown = between.slice(0, SHOWN_STRETCHES).map((ids) => (ids.first === ids.last ? count(ids.first) : `${count(ids.first)}–${count(ids.last)}`));
  const more = between.length > SHOWN_STRETCHES ? ` and ${String(between.length - SHOWN_STRETCHES)} more stretch(es)` : "";
  return (
    ` The file is damaged: ${count(summary.rows)} row(s) read` +
    (between.length > 0 ? `, up to ${count(lost)} could not be read (ids ${shown.join(", ")}${more})` : "") +
    (tail ? `; the rows after id ${count(tail.after)} could not be read (the file is cut short or damaged from there)` : "") +
    "."
  );
}

/** An import in progress: the file set aside and how far it got (kept beside the queue file). */
export interface PendingImport {
  readonly backup: string;
  readonly afterRowid: number;
}

const markerPath = (queueFile: string): string => `${queueFile}.plex_autoscan.import`;

/**
 * At open: when the queue file is plex_autoscan's, it is moved aside (to `<file>.plex_autoscan.bak`, kept for good)
 * and an import is noted beside it; an import a restart interrupted is found again. Undefined: nothing to import.
 */
export async function findPendingImport(queueFile: string, log: Logger): Promise<PendingImport | undefined> {
  const marker = markerPath(queueFile);
  const noted = await readFile(marker, "utf8").then(
    (text) => JSON.parse(text) as PendingImport,
    () => undefined,
  );
  if (noted) return noted;
  const legacy = await openPlexAutoscanQueue(queueFile);
  // Not plex_autoscan's: the store opens it as its own (and refuses a FIFO or a directory, in words).
  if (legacy.kind !== "queue") return undefined;
  legacy.queue.close();
  const backup = await freeName(`${queueFile}.plex_autoscan.bak`);
  const pending: PendingImport = { backup, afterRowid: 0 };
  // Noted before the move: a crash between the two finds the file where it was, and notes it again.
  await writeFileDurably(marker, JSON.stringify(pending), { log });
  await rename(queueFile, backup);
  return pending;
}

export async function notePendingImport(queueFile: string, pending: PendingImport, log: Logger): Promise<void> {
  await writeFileDurably(markerPath(queueFile), JSON.stringify(pending), { log });
}

export async function finishPendingImport(queueFile: string): Promise<void> {
  await rm(markerPath(queueFile), { force: true });
}

async function freeName(path: string): Promise<string> {
  for (let n = 0; ; n++) {
    const candidate = n === 0 ? path : `${path}.${String(n)}`;
    if (!(await stat(candidate).then(() => true, () => false))) return candidate;
  }
}

export interface RunningImport {
  /** Rows done and in all, while the import runs (in all: the rows done so far, when damage hides the count). */
  progress(): { readonly done: number; readonly total: number } | undefined;
  /** Settles when the import finished, failed (logged; a restart goes on) or was stopped. */
  readonly done: Promise<void>;
  stop(): Promise<void>;
}

export interface RunImportOptions {
  readonly queueFile: string;
  readonly pending: PendingImport;
  readonly store: ImportOptions["store"];
  readonly log: Logger;
  /** How often a progress line is logged (default 5 s). */
  readonly progressEveryMs?: number;
  readonly batchSize?: number;
}

/**
 * The import at start, beside the service (webhooks are answered meanwhile and merge with what is imported): one
 * progress line every few seconds, where it got to noted after each batch, one line at the end.
 */
export function runPendingImport(options: RunImportOptions): RunningImport {
  const { queueFile, pending, log } = options;
  const stopping = new AbortController();
  const everyMs = options.progressEveryMs ?? 5_000;
  // Running from here on (the counts come once the file is open).
  let progress: { done: number; total: number } | undefined = { done: 0, total: 0 };
  const done = (async () => {
    const opened = await openPlexAutoscanQueue(pending.backup);
    if (opened.kind !== "queue") {
      log.error(
        { backup: pending.backup },
        `Cannot read plex_autoscan's queue '${pending.backup}' to import it; nothing was imported from it. ` +
          `Run 'autoscan import --from-plex-autoscan ${pending.backup}' once it is readable.`,
      );
      return finishPendingImport(queueFile);
    }
    const source = opened.queue;
    const started = Date.now();
    let lastLine = started;
    const before = pending.afterRowid > 0 ? (source.countThrough(pending.afterRowid) ?? 0) : 0;
    progress = { done: before, total: source.total ?? before };
    log.info(
      { backup: pending.backup, rows: source.total },
      `Importing plex_autoscan's queue: ${source.total === undefined ? "a damaged file, as many rows as can be read" : `${count(source.total)} row(s)`} ` +
        `from '${pending.backup}'${before > 0 ? `, going on after ${count(before)} imported before a restart` : ""}.`,
    );
    try {
      const summary = await importPlexAutoscanQueue({
        source,
        store: options.store,
        afterRowid: pending.afterRowid,
        signal: stopping.signal,
        ...(options.batchSize ? { batchSize: options.batchSize } : {}),
        async onBatch(lastRowid, reached) {
          progress = { done: reached.done, total: reached.total ?? reached.done };
          await notePendingImport(queueFile, { backup: pending.backup, afterRowid: lastRowid }, log);
          if (Date.now() - lastLine < everyMs || (reached.total !== undefined && reached.done >= reached.total)) return;
          lastLine = Date.now();
          log.info(
            { done: reached.done, left: reached.total === undefined ? undefined : reached.total - reached.done },
            `Importing plex_autoscan's queue: ${count(reached.done)}` +
              (reached.total === undefined ? " row(s) done." : ` of ${count(reached.total)} row(s) done, ${count(reached.total - reached.done)} left.`),
          );
        },
      });
      if (stopping.signal.aborted) return;
      await finishPendingImport(queueFile);
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      const requests = summary.queued + summary.merged;
      log[summary.unreadable.length > 0 ? "warn" : "info"](
        { file: queueFile, backup: pending.backup, ...summary, seconds: Number(seconds) },
        `Imported ${String(requests)} scan request(s) from the plex_autoscan queue in '${queueFile}' (the old file is kept ` +
          `as '${pending.backup}'): ${String(summary.queued)} queued, ${String(summary.merged)} merged into a waiting ` +
          `folder${summary.skipped > 0 ? `, ${String(summary.skipped)} skipped (not a full path)` : ""}; ${seconds} s.` +
          describeDamage(summary),
      );
    } catch (error) {
      log.error(
        { err: error, backup: pending.backup },
        "The import of plex_autoscan's queue stopped; it goes on where it got to at the next start.",
      );
    } finally {
      progress = undefined;
      source.close();
    }
  })();
  return {
    progress: () => progress,
    done,
    async stop() {
      stopping.abort();
      await done;
    },
  };
}
