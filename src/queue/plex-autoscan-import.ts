import { readFile, rename, rm, stat } from "node:fs/promises";
import { DatabaseSync, type StatementSync } from "node:sqlite";
import { writeFileDurably } from "../core/durable-file.ts";
import type { Logger } from "../core/logger.ts";
import type { ScanRequest } from "../core/scan.ts";
import { isAbsolutePath } from "../paths/normalize.ts";

/**
 * plex_autoscan's queue, moved over: l3uddz's `queueitemmodel(scan_path, scan_for, scan_section, scan_type)` (peewee)
 * or by275's `scan_item(path, request_from, section_id, event_type, created_at)`. Their paths are already in the media
 * server's form (plex_autoscan mapped before queueing); a path may name a file or a folder, so the kind is `unknown`
 * and the dispatcher's file checks decide, as for any such request: nothing is looked up on disk at import.
 *
 * The file is read from disk with Node's SQLite (never copied into memory whole) and its rows go into the queue in
 * batches, each one store write, so the import never holds the event loop and a webhook that arrives meanwhile is
 * answered at once. Where it got to is kept in `<queue file>.plex_autoscan.import` after each batch: a restart goes
 * on from there (a batch stored twice merges: the same request again adds nothing).
 */
export interface PlexAutoscanQueue {
  readonly path: string;
  /** Rows in the file (all of them, the ones already imported included). */
  readonly total: number;
  /** The rows after `afterRowid`, in order, as requests (`undefined`: a path that is not a full path, skipped). */
  rows(afterRowid: number): Iterable<{ readonly rowid: number; readonly request: ScanRequest | undefined }>;
  /** Rows up to and including `rowid` (how far an interrupted import got). */
  countThrough(rowid: number): number;
  close(): void;
}

/** Opens `path` when it is a plex_autoscan queue (and not autoscan's own, which has `items`); undefined otherwise. */
export function openPlexAutoscanQueue(path: string): PlexAutoscanQueue | undefined {
  let db: DatabaseSync;
  try {
    db = new DatabaseSync(path, { readOnly: true });
  } catch {
    return undefined;
  }
  try {
    const tables = new Set(
      db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all().map((row) => String(row.name)),
    );
    if (tables.has("items")) return close(db);
    const source = tables.has("queueitemmodel")
      ? { table: "queueitemmodel", path: "scan_path", from: "scan_for", event: "scan_type" }
      : tables.has("scan_item")
        ? { table: "scan_item", path: "path", from: "request_from", event: "event_type" }
        : undefined;
    if (!source) return close(db);
    const count = db.prepare(`SELECT count(*) AS n FROM ${source.table}`).get();
    const through = db.prepare(`SELECT count(*) AS n FROM ${source.table} WHERE rowid <= ?`);
    const select: StatementSync = db.prepare(
      `SELECT rowid AS rowid, ${source.path} AS path, ${source.from} AS source, ${source.event} AS event ` +
        `FROM ${source.table} WHERE rowid > ? ORDER BY rowid`,
    );
    return {
      path,
      total: Number(count?.n ?? 0),
      *rows(afterRowid) {
        for (const row of select.iterate(afterRowid)) {
          yield { rowid: Number(row.rowid), request: toRequest(row.path, row.source, row.event) };
        }
      },
      countThrough: (rowid) => Number(through.get(rowid)?.n ?? 0),
      close: () => db.close(),
    };
  } catch {
    // Not a database (autoscan's own file is read by its store, which says what is wrong with it).
    return close(db);
  }
}

function close(db: DatabaseSync): undefined {
  db.close();
  return undefined;
}

function toRequest(path: unknown, source: unknown, event: unknown): ScanRequest | undefined {
  // A row whose path is not a full path could not have been scanned either; it stays behind (in the file kept aside).
  if (typeof path !== "string" || !isAbsolutePath(path)) return undefined;
  return {
    path,
    kind: "unknown",
    source: typeof source === "string" && source.length > 0 ? source : "plex_autoscan",
    event: typeof event === "string" && event.length > 0 ? event : "Restored",
  };
}

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
}

export interface ImportProgress {
  readonly done: number;
  readonly total: number;
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
  const before = lastRowid > 0 ? source.countThrough(lastRowid) : 0;
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
  for (const { rowid, request } of source.rows(lastRowid)) {
    if (options.signal?.aborted) break;
    rows += 1;
    batchEnd = rowid;
    if (request) batch.push(request);
    else skipped += 1;
    if (rows % size === 0) await flush();
  }
  if (!options.signal?.aborted && batchEnd !== lastRowid) await flush();
  return { rows, queued, merged, skipped };
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
  const legacy = openPlexAutoscanQueue(queueFile);
  if (!legacy) return undefined;
  legacy.close();
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
  /** Rows done and in all, while the import runs. */
  progress(): ImportProgress | undefined;
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
  let progress: ImportProgress | undefined;
  const done = (async () => {
    const source = openPlexAutoscanQueue(pending.backup);
    if (!source) {
      log.error(
        { backup: pending.backup },
        `Cannot read plex_autoscan's queue '${pending.backup}' to import it; nothing was imported from it. ` +
          `Run 'autoscan import --from-plex-autoscan ${pending.backup}' once it is readable.`,
      );
      return finishPendingImport(queueFile);
    }
    const started = Date.now();
    let lastLine = started;
    progress = { done: pending.afterRowid > 0 ? source.countThrough(pending.afterRowid) : 0, total: source.total };
    log.info(
      { backup: pending.backup, rows: source.total },
      `Importing plex_autoscan's queue: ${source.total.toLocaleString("en-US")} row(s) from '${pending.backup}'` +
        `${progress.done > 0 ? `, going on after ${progress.done.toLocaleString("en-US")} imported before a restart` : ""}.`,
    );
    try {
      const summary = await importPlexAutoscanQueue({
        source,
        store: options.store,
        afterRowid: pending.afterRowid,
        signal: stopping.signal,
        ...(options.batchSize ? { batchSize: options.batchSize } : {}),
        async onBatch(lastRowid, reached) {
          progress = reached;
          await notePendingImport(queueFile, { backup: pending.backup, afterRowid: lastRowid }, log);
          if (Date.now() - lastLine < everyMs || reached.done >= reached.total) return;
          lastLine = Date.now();
          log.info(
            { done: reached.done, left: reached.total - reached.done },
            `Importing plex_autoscan's queue: ${reached.done.toLocaleString("en-US")} of ` +
              `${reached.total.toLocaleString("en-US")} row(s) done, ${(reached.total - reached.done).toLocaleString("en-US")} left.`,
          );
        },
      });
      if (stopping.signal.aborted) return;
      await finishPendingImport(queueFile);
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      const requests = summary.queued + summary.merged;
      log.info(
        { file: queueFile, backup: pending.backup, ...summary, seconds: Number(seconds) },
        `Imported ${String(requests)} scan request(s) from the plex_autoscan queue in '${queueFile}' (the old file is kept ` +
          `as '${pending.backup}'): ${String(summary.queued)} queued, ${String(summary.merged)} merged into a waiting ` +
          `folder${summary.skipped > 0 ? `, ${String(summary.skipped)} skipped (not a full path)` : ""}; ${seconds} s.`,
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
