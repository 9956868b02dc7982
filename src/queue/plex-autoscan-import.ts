import { readFile, rename, rm, stat } from "node:fs/promises";
import { resolve } from "node:path";
import { FatalError } from "../core/errors.ts";
import type { Logger } from "../core/logger.ts";
import type { ScanRequest } from "../core/scan.ts";
import { openPlexAutoscanQueue, type PlexAutoscanQueue, type UnreadableIds } from "./plex-autoscan-file.ts";
import type { ScanQueue } from "./scan-queue.ts";

/**
 * plex_autoscan's queue, moved over (the file is read by `plex-autoscan-file.ts`), the same way into either store and
 * by `autoscan import`: its rows go into the queue in batches, each one store write, so the import never holds the
 * event loop and a webhook that arrives meanwhile is answered at once. Each batch's write also keeps the last row it
 * stored (an `ImportMark`, keyed by the file): a restart goes on after it, and no row is stored twice. A damaged file
 * gives what can be read of it, and the summary says which ids could not be.
 *
 * Found where autoscan's queue file goes, it is taken in by steps each safe to die in:
 * 1. `setAsidePlexAutoscanQueue`, before the store opens anything: the file is renamed `<queue file>.plex_autoscan`
 *    (it is never opened as autoscan's own; a start that finds it there goes on with it);
 * 2. the store opens (the file where autoscan's goes is now its own, or none);
 * 3. `startPlexAutoscanImport`: the rows in batches, each with its mark, after the mark an earlier start left;
 * 4. the file is renamed `<queue file>.plex_autoscan.bak` (kept for good), then the mark is forgotten.
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

/** The queue an import stores into. */
export type ImportTarget = Pick<ScanQueue, "importRequests" | "importedThrough">;

export interface ImportOptions {
  readonly source: PlexAutoscanQueue;
  readonly queue: Pick<ImportTarget, "importRequests">;
  /** Keeps how far the import got with each batch's write, under this key (`importKey`). */
  readonly key?: string;
  /** Rows already imported by an earlier run (by rowid: the mark it kept). */
  readonly afterRowid?: number;
  /** Hears each stored batch: the rowid reached (to keep), rows done so far (earlier runs included). */
  readonly onBatch?: (lastRowid: number, progress: ImportProgress) => Promise<void> | void;
  readonly batchSize?: number;
  readonly signal?: AbortSignal;
}

/** Streams the file's rows into the queue, one batch per store write. */
export async function importPlexAutoscanQueue(options: ImportOptions): Promise<ImportSummary> {
  const { source, key } = options;
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
    // Stored with the mark, or not at all: a batch of rows that are not full paths moves the mark alone.
    if (batch.length > 0 || key !== undefined) {
      const outcome = await options.queue.importRequests(batch, key === undefined ? undefined : { key, through: batchEnd });
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

/** What an import stored, for the summary lines. */
export function describeCounts(summary: ImportSummary): string {
  const skipped = summary.skipped > 0 ? `, ${String(summary.skipped)} skipped (not a full path)` : "";
  return `${String(summary.queued)} queued, ${String(summary.merged)} merged into a waiting folder${skipped}`;
}
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

/**
 * Where an import keeps its mark: the file by its path and identity (inode, size, modification time: a rename keeps
 * them), so another file later put at the same path starts afresh.
 */
export async function importKey(path: string): Promise<string> {
  const file = await stat(path);
  return `plex_autoscan ${resolve(path)} ${String(file.ino)} ${String(file.size)} ${String(Math.trunc(file.mtimeMs))}`;
}

/** Where an import found at start keeps the file while it runs (step 1), and where the file stays after (step 4). */
const asidePath = (queueFile: string): string => `${queueFile}.plex_autoscan`;
const keptPath = (queueFile: string): Promise<string> => freeName(`${queueFile}.plex_autoscan.bak`);

/**
 * Step 1, before the store opens anything: plex_autoscan's queue where autoscan's goes (its `--queuefile`) is renamed
 * aside. Answers the file to import, one an earlier start set aside included; undefined: nothing to import.
 */
export async function setAsidePlexAutoscanQueue(queueFile: string): Promise<string | undefined> {
  const aside = asidePath(queueFile);
  await adoptEarlierMarker(queueFile, aside);
  const legacy = await openPlexAutoscanQueue(queueFile);
  if (legacy.kind === "queue") legacy.queue.close();
  if (await exists(aside)) {
    // Never opened as autoscan's own, nor put over the one still importing.
    if (legacy.kind === "queue") {
      throw new FatalError(`'${queueFile}' is plex_autoscan's queue while '${aside}' is still being imported: move one of them away and start again.`);
    }
    return aside;
  }
  // Not plex_autoscan's: the store opens it as its own (and refuses a FIFO or a directory, in words).
  if (legacy.kind !== "queue") return undefined;
  await rename(queueFile, aside);
  return aside;
}

/**
 * An import an earlier autoscan began kept its file as `.plex_autoscan.bak` with a `.plex_autoscan.import` marker
 * beside it: the file goes where an import runs now, and starts again at its first row (what still waits merges).
 */
async function adoptEarlierMarker(queueFile: string, aside: string): Promise<void> {
  const marker = `${queueFile}.plex_autoscan.import`;
  const noted = await readFile(marker, "utf8").then(
    (text) => JSON.parse(text) as { backup?: string },
    () => undefined,
  );
  if (!noted) return;
  if (noted.backup && !(await exists(aside)) && (await exists(noted.backup))) await rename(noted.backup, aside);
  await rm(marker, { force: true });
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

async function freeName(path: string): Promise<string> {
  for (let n = 0; ; n++) {
    const candidate = n === 0 ? path : `${path}.${String(n)}`;
    if (!(await exists(candidate))) return candidate;
  }
}

/** Tests only (`AUTOSCAN_TEST_PAUSE_IMPORT_AT`): at the step named, the import waits for ever, to be killed there. */
export async function pauseAtStep(pauseAt: string | undefined, step: string, log: Logger): Promise<void> {
  if (pauseAt !== step) return;
  log.warn({ step }, `Paused at the import step '${step}' (a test asked for it).`);
  await new Promise(() => setInterval(() => undefined, 60_000));
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
  /** The file set aside (`setAsidePlexAutoscanQueue`). */
  readonly aside: string;
  readonly queue: ImportTarget;
  readonly log: Logger;
  /** How often a progress line is logged (default 5 s). */
  readonly progressEveryMs?: number;
  readonly batchSize?: number;
  /** Tests only: the import waits for ever at this step (`rows`: after the first batch; `marker`: after the last). */
  readonly pauseAt?: string;
}

/**
 * Steps 3 and 4, beside the service (webhooks are answered meanwhile and merge with what is imported): one progress
 * line every few seconds, one line at the end.
 */
export function startPlexAutoscanImport(options: RunImportOptions): RunningImport {
  const { queueFile, aside, log } = options;
  const stopping = new AbortController();
  const everyMs = options.progressEveryMs ?? 5_000;
  const pause = (step: string): Promise<void> => pauseAtStep(options.pauseAt, step, log);
  // Running from here on (the counts come once the file is open).
  let progress: { done: number; total: number } | undefined = { done: 0, total: 0 };
  const done = (async () => {
    const opened = await openPlexAutoscanQueue(aside);
    if (opened.kind !== "queue") {
      const kept = await keptPath(queueFile);
      await rename(aside, kept);
      log.error(
        { backup: kept },
        `Cannot read plex_autoscan's queue '${kept}' to import it; nothing was imported from it. ` +
          `Run 'autoscan import --from-plex-autoscan ${kept}' once it is readable.`,
      );
      return;
    }
    const source = opened.queue;
    const started = Date.now();
    let lastLine = started;
    try {
      const key = await importKey(aside);
      const after = (await options.queue.importedThrough(key)) ?? 0;
      const before = after > 0 ? (source.countThrough(after) ?? 0) : 0;
      progress = { done: before, total: source.total ?? before };
      log.info(
        { backup: aside, rows: source.total },
        `Importing plex_autoscan's queue: ${source.total === undefined ? "a damaged file, as many rows as can be read" : `${count(source.total)} row(s)`} ` +
          `from '${aside}'${before > 0 ? `, going on after ${count(before)} imported before a restart` : ""}.`,
      );
      let batches = 0;
      const summary = await importPlexAutoscanQueue({
        source,
        queue: options.queue,
        key,
        afterRowid: after,
        signal: stopping.signal,
        ...(options.batchSize ? { batchSize: options.batchSize } : {}),
        async onBatch(_lastRowid, reached) {
          progress = { done: reached.done, total: reached.total ?? reached.done };
          if ((batches += 1) === 1) await pause("rows");
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
      await pause("marker");
      const kept = await keptPath(queueFile);
      await rename(aside, kept);
      await options.queue.importRequests([], { key, through: undefined });
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      log[summary.unreadable.length > 0 ? "warn" : "info"](
        { file: queueFile, backup: kept, ...summary, seconds: Number(seconds) },
        `Imported ${String(summary.queued + summary.merged)} scan request(s) from the plex_autoscan queue in '${queueFile}' ` +
          `(the old file is kept as '${kept}'): ${describeCounts(summary)}; ${seconds} s.${describeDamage(summary)}`,
      );
    } catch (error) {
      log.error({ err: error, backup: aside }, "The import of plex_autoscan's queue stopped; it goes on where it got to at the next start.");
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
