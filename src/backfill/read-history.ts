import type { ScanRequest, ScanSink } from "../core/scan.ts";
import type { Cursor } from "./cursor-store.ts";

/**
 * One read of one app's history, newest first, down to `from`: each page's records become the requests their webhooks
 * would have produced; those the queue already covers (a request for the same folder since the record's time: the
 * webhook arrived, or an earlier read queued it) are left out, and the rest are stored through the sink before the
 * next page is read. Memory holds one page. Nothing here moves the cursor: the caller does, after the whole read.
 *
 * Pages shift while new records arrive (offsets, no tie-breaker): a record read twice is covered the second time.
 */
export interface HistoryRecordLike {
  readonly id: number;
  /** ms since the epoch. */
  readonly date: number;
}

export interface HistoryPages<R extends HistoryRecordLike> {
  historyPage(page: number, pageSize: number, signal?: AbortSignal): Promise<{ readonly totalRecords: number; readonly records: readonly R[] }>;
}

export interface ReadOptions<R extends HistoryRecordLike> {
  readonly pages: HistoryPages<R>;
  readonly toRequests: (record: R) => ScanRequest[];
  /** Records older than this are not read (ms). */
  readonly from: number;
  /** The record a previous read ended at: records up to it (by time and id) were read then, and are left out. */
  readonly after?: Cursor;
  readonly isCovered: (request: ScanRequest, since: number) => Promise<boolean>;
  /** Stores the requests (durable when it resolves); absent for a dry run. */
  readonly sink?: ScanSink;
  readonly pageSize?: number;
  readonly signal?: AbortSignal;
  /** After each page: what was read so far. */
  readonly onProgress?: (progress: ReadProgress) => void;
  /** Each request the read queues (or, in a dry run, would queue), with its record. */
  readonly onRequest?: (request: ScanRequest, record: R) => void;
}

export interface ReadProgress {
  readonly pages: number;
  readonly records: number;
  /** Requests stored (or that a dry run would store). */
  readonly queued: number;
  /** Requests left out: the queue had them already. */
  readonly covered: number;
}

export interface ReadResult extends ReadProgress {
  /** The newest record seen (the next cursor), if any record was there. */
  readonly newest?: Cursor;
}

/** The app's clock and ours may differ a little, and v4-era apps date records to the whole second. */
export const CLOCK_SLACK_MS = 2_000;
export const DEFAULT_PAGE_SIZE = 250;

export async function readHistory<R extends HistoryRecordLike>(options: ReadOptions<R>): Promise<ReadResult> {
  const pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
  let progress: ReadProgress = { pages: 0, records: 0, queued: 0, covered: 0 };
  let newest: Cursor | undefined;
  // An app that ignores `page` answers the same page again and again: two repeats end the read (one can be records
  // arriving while we read, which shift the pages by exactly one). A short `totalRecords` or a short page does not end
  // it: an app that miscounts, or caps the page size below ours, is still read to the end.
  let previous: string | undefined;
  let repeats = 0;
  for (let page = 1; ; page++) {
    options.signal?.throwIfAborted();
    const answer = await options.pages.historyPage(page, pageSize, options.signal);
    if (answer.records.length === 0) break;
    const signature = `${answer.records[0]?.id}:${answer.records.at(-1)?.id}:${answer.records.length}`;
    repeats = signature === previous ? repeats + 1 : 0;
    if (repeats >= 2) break;
    previous = signature;
    const batch: ScanRequest[] = [];
    let older = false;
    let covered = 0;
    for (const record of answer.records) {
      if (newest === undefined || record.date > newest.date || (record.date === newest.date && record.id > newest.id)) {
        newest = { date: record.date, id: record.id };
      }
      if (record.date < options.from) {
        older = true;
        continue;
      }
      // The overlap before the cursor holds records read last time (and, dated the same second, later ones).
      if (options.after && record.date <= options.after.date && record.id <= options.after.id) continue;
      for (const request of options.toRequests(record)) {
        if ((await options.isCovered(request, record.date - CLOCK_SLACK_MS)) || batch.some((queued) => sameFolderRequest(queued, request))) {
          covered += 1;
          continue;
        }
        batch.push(request);
        options.onRequest?.(request, record);
      }
    }
    if (batch.length > 0 && options.sink) {
      await options.sink(batch, { origin: "backfill", ...(options.signal ? { signal: options.signal } : {}) });
    }
    progress = {
      pages: progress.pages + 1,
      records: progress.records + answer.records.length,
      queued: progress.queued + batch.length,
      covered: progress.covered + covered,
    };
    options.onProgress?.(progress);
    // Newest first: once a page reaches past `from`, the pages after it are older still.
    if (older) break;
  }
  return newest ? { ...progress, newest } : progress;
}

/** The same path asked for twice in one page (Sonarr writes one import record per episode of a multi-episode file). */
function sameFolderRequest(a: ScanRequest, b: ScanRequest): boolean {
  return a.path === b.path && a.kind === b.kind && (a.deleted ?? false) === (b.deleted ?? false);
}
