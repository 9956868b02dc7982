import { describe, expect, it } from "vitest";
import type { EnqueueResult, ScanRequest, ScanSink } from "../core/scan.ts";
import { CLOCK_SLACK_MS, readHistory, type HistoryPages, type HistoryRecordLike } from "./read-history.ts";

/**
 * One read of one app's history, against a small page source written here (newest first, `(page-1)*pageSize` offsets,
 * as the apps page: ../shared/reference/arr-history.md §2) and a queue that remembers what the sink stored, for the
 * covered check. The wire client and the real queue are tested through the service (test/backfill-*.test.ts).
 */
interface Rec extends HistoryRecordLike {
  readonly path: string;
}

const T0 = Date.parse("2026-06-21T00:00:00Z");

/** `n` records, ids 1..n, one minute apart, each in its own folder. */
function history(n: number): Rec[] {
  return Array.from({ length: n }, (_, index) => ({ id: index + 1, date: T0 + index * 60_000, path: `/tv/Show ${index + 1}/e.mkv` }));
}

/** The app's paged answer: newest first, offsets over the history as it is at the time of the call. */
function pagesOf(records: () => readonly Rec[], asked: number[] = []): HistoryPages<Rec> {
  return {
    async historyPage(page, pageSize) {
      asked.push(page);
      const newestFirst = [...records()].sort((a, b) => b.date - a.date || b.id - a.id);
      const start = (page - 1) * pageSize;
      return { totalRecords: newestFirst.length, records: newestFirst.slice(start, start + pageSize) };
    },
  };
}

const toRequests = (record: Rec): ScanRequest[] => [{ path: record.path, kind: "file", source: "Sonarr", event: "Download (backfill)" }];

/** What the queue stored: path → when; a request is covered when the same path was stored at or after `since`. */
function queue() {
  const stored = new Map<string, number>();
  const batches: (readonly ScanRequest[])[] = [];
  const sink: ScanSink = async (requests) => {
    batches.push(requests);
    for (const request of requests) stored.set(request.path, Date.now());
    return { items: requests.map((request) => ({ folder: request.path, merged: false })) } satisfies EnqueueResult;
  };
  const isCovered = async (request: ScanRequest, since: number): Promise<boolean> => (stored.get(request.path) ?? Number.NEGATIVE_INFINITY) >= since;
  return { stored, batches, sink, isCovered };
}

describe("readHistory", () => {
  it("reads newest first and stops at the page that reaches past `from`", async () => {
    const records = history(30);
    const asked: number[] = [];
    const q = queue();
    const from = records[15]!.date;
    const result = await readHistory({ pages: pagesOf(() => records, asked), toRequests, from, isCovered: q.isCovered, sink: q.sink, pageSize: 10 });
    // Page 1 holds 30..21, page 2 holds 20..11 (11 to 15 older than `from`): no page 3.
    expect(asked).toEqual([1, 2]);
    expect([...q.stored.keys()].sort()).toEqual(records.slice(15).map((record) => record.path).sort());
    expect(result).toEqual({ pages: 2, records: 20, queued: 15, covered: 0, newest: { date: records[29]!.date, id: 30 } });
  });

  it("a record read twice across shifted pages (new records arrived meanwhile) is covered the second time", async () => {
    const records = history(25);
    const q = queue();
    let arrived = 0;
    const source = pagesOf(() => records);
    const pages: HistoryPages<Rec> = {
      async historyPage(page, pageSize, signal) {
        // Two new imports land between the first and the second page: every offset shifts by two.
        if (page === 2 && arrived === 0) {
          arrived = 2;
          records.push({ id: 26, date: T0 + 100 * 60_000, path: "/tv/New A/e.mkv" }, { id: 27, date: T0 + 101 * 60_000, path: "/tv/New B/e.mkv" });
        }
        return source.historyPage(page, pageSize, signal);
      },
    };
    const result = await readHistory({ pages, toRequests, from: T0, isCovered: q.isCovered, sink: q.sink, pageSize: 10 });
    const queuedPaths = q.batches.flat().map((request) => request.path);
    // Each of the 25 records queued exactly once; the two read again on page 2 were covered.
    expect(new Set(queuedPaths).size).toBe(queuedPaths.length);
    expect(queuedPaths.filter((path) => !path.includes("New")).sort()).toEqual(history(25).map((record) => record.path).sort());
    expect(result.covered).toBe(2);
    // The two that arrived while reading are newer than the cursor this read hands back: the next read gets them.
    expect(result.newest).toEqual({ date: records[24]!.date, id: 25 });
  });

  it("a request the queue already has (the webhook came) is covered; one stored before the record's time is not", async () => {
    const records = history(3);
    const q = queue();
    q.stored.set(records[2]!.path, records[2]!.date - CLOCK_SLACK_MS + 1); // the webhook, about when the record was written
    q.stored.set(records[1]!.path, records[1]!.date - CLOCK_SLACK_MS - 60_000); // a scan of that folder long before
    const result = await readHistory({ pages: pagesOf(() => records), toRequests, from: T0, isCovered: q.isCovered, sink: q.sink });
    expect(q.batches.flat().map((request) => request.path).sort()).toEqual([records[0]!.path, records[1]!.path]);
    expect(result).toMatchObject({ queued: 2, covered: 1 });
  });

  it("a dry run (no sink) queues nothing, and tells what it would queue", async () => {
    const records = history(12);
    const q = queue();
    const seen: string[] = [];
    const result = await readHistory({
      pages: pagesOf(() => records),
      toRequests,
      from: T0,
      isCovered: q.isCovered,
      pageSize: 5,
      onRequest: (request) => seen.push(request.path),
    });
    expect(q.stored.size).toBe(0);
    expect(q.batches).toEqual([]);
    expect(seen.sort()).toEqual(records.map((record) => record.path).sort());
    expect(result).toMatchObject({ pages: 3, records: 12, queued: 12, covered: 0 });
  });

  it("the sink is called once per page, and the next page is asked for only after it resolved", async () => {
    const records = history(23);
    const events: string[] = [];
    const source = pagesOf(() => records);
    const pages: HistoryPages<Rec> = {
      historyPage(page, pageSize, signal) {
        events.push(`page ${page}`);
        return source.historyPage(page, pageSize, signal);
      },
    };
    const q = queue();
    const sink: ScanSink = async (requests, options) => {
      events.push(`sink ${requests.length}`);
      // A slow disk: the read must wait for it.
      await new Promise((resolve) => setTimeout(resolve, 20));
      events.push("stored");
      return q.sink(requests, options);
    };
    await readHistory({ pages, toRequests, from: T0, isCovered: q.isCovered, sink, pageSize: 10 });
    // A short page does not end the read (an app may cap the page size): the empty page 4 does.
    expect(events).toEqual(["page 1", "sink 10", "stored", "page 2", "sink 10", "stored", "page 3", "sink 3", "stored", "page 4"]);
  });

  it("an app that ignores `page` (the same page for ever) is read a bounded number of times", async () => {
    const records = history(25);
    const newestTen = [...records].reverse().slice(0, 10);
    const asked: number[] = [];
    const q = queue();
    const pages: HistoryPages<Rec> = {
      async historyPage(page) {
        asked.push(page);
        return { totalRecords: records.length, records: newestTen };
      },
    };
    const result = await readHistory({ pages, toRequests, from: T0, isCovered: q.isCovered, sink: q.sink, pageSize: 10 });
    // Pages 2 and 3 answer page 1 again: two repeats end the read (one could be records arriving meanwhile).
    expect(asked).toEqual([1, 2, 3]);
    expect(result).toMatchObject({ pages: 2, queued: 10, covered: 10 });
    expect(q.batches).toHaveLength(1);
  });

  it("an app whose totalRecords is too low is still read to the end", async () => {
    const records = history(25);
    const newestFirst = [...records].reverse();
    const q = queue();
    const pages: HistoryPages<Rec> = {
      async historyPage(page, size) {
        return { totalRecords: 5, records: newestFirst.slice((page - 1) * size, page * size) };
      },
    };
    const result = await readHistory({ pages, toRequests, from: T0, isCovered: q.isCovered, sink: q.sink, pageSize: 10 });
    expect(result).toMatchObject({ records: 25, queued: 25 });
  });

  it("memory stays flat: 100,000 records in pages of 250 with a sink that drops what it gets", async () => {
    const total = 100_000;
    const pageSize = 250;
    // Pages made on demand: only the page asked for exists, as over the wire.
    const pages: HistoryPages<Rec> = {
      async historyPage(page, size) {
        const start = (page - 1) * size;
        const records: Rec[] = [];
        for (let index = start; index < Math.min(start + size, total); index += 1) {
          const id = total - index;
          records.push({ id, date: T0 + id * 1000, path: `/tv/Show ${id}/Season 01/Show ${id} - S01E01 - A title long enough to weigh.mkv` });
        }
        return { totalRecords: total, records };
      },
    };
    let received = 0;
    const sink: ScanSink = async (requests) => {
      received += requests.length;
      return { items: [] };
    };
    const gc = (globalThis as { gc?: () => void }).gc;
    gc?.();
    const before = process.memoryUsage().heapUsed;
    let peak = before;
    const result = await readHistory({
      pages,
      toRequests,
      from: T0,
      isCovered: async () => false,
      sink,
      pageSize,
      onProgress: () => void (peak = Math.max(peak, process.memoryUsage().heapUsed)),
    });
    gc?.();
    const after = process.memoryUsage().heapUsed;
    const mib = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
    console.log(
      `readHistory, ${total.toLocaleString("en-US")} records in pages of ${pageSize}: heap used ${mib(before)} before, ${mib(peak)} at the peak page, ` +
        `${mib(after)} after${gc ? "" : " (no --expose-gc: before and after include garbage not yet collected)"}`,
    );
    expect(result).toMatchObject({ pages: total / pageSize, records: total, queued: total, covered: 0 });
    expect(received).toBe(total);
  });
});
