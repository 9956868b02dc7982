import pino from "pino";
import type { EnqueueResult, ScanRequest, ScanSink } from "../../src/core/scan.ts";
import { createPathMapper, type PathMappings } from "../../src/paths/mapping.ts";
import { parentFolder } from "../../src/paths/normalize.ts";
import { createApp } from "../../src/web/app.ts";
import type { QueueAdmin, QueueItemView, WebOptions } from "../../src/web/options.ts";

/**
 * Builds the real web app with small in-test capabilities: a sink that records what it was given (and can be told
 * to fail or hang), an in-memory queue admin, and a logger whose JSON lines are kept for assertions.
 */
export const TEST_PASS = "9f2c4e1d8b7a60354a1e2b3c4d5e6f70";

export interface RecordingSink {
  readonly sink: ScanSink;
  readonly batches: ScanRequest[][];
  /** Every request received, in order. */
  all(): ScanRequest[];
  failWith(error: Error | undefined): void;
  /** Requests wait in front of the store and are withdrawn when the caller gives up (the ScanSink contract). */
  hang(on: boolean): void;
  /** Requests are taken at once and confirmed after `ms`, whether the caller gave up meanwhile or not. */
  slow(ms: number): void;
}

export function createRecordingSink(): RecordingSink {
  const batches: ScanRequest[][] = [];
  let failure: Error | undefined;
  let hanging = false;
  let slowMs = 0;
  const seen = new Set<string>();
  return {
    batches,
    all: () => batches.flat(),
    failWith(error) {
      failure = error;
    },
    hang(on) {
      hanging = on;
    },
    slow(ms) {
      slowMs = ms;
    },
    sink: async (requests, options = {}): Promise<EnqueueResult> => {
      if (hanging) {
        return new Promise<never>((_resolve, reject) => {
          options.signal?.addEventListener("abort", () => reject(new Error("withdrawn before it was stored")));
        });
      }
      if (failure) throw failure;
      if (slowMs > 0) await new Promise((resolve) => setTimeout(resolve, slowMs));
      batches.push([...requests]);
      return {
        items: requests.map((request) => {
          const folder = request.kind === "folder" ? request.path : parentFolder(request.path);
          const merged = seen.has(folder);
          seen.add(folder);
          return { folder, merged };
        }),
      };
    },
  };
}

type Item = QueueItemView;

/** A full queue item view from the fields a test cares about. */
export function itemView(fields: Partial<QueueItemView> & Pick<QueueItemView, "id" | "folder">): QueueItemView {
  const at = Date.UTC(2026, 10, 25, 8, 0, 0);
  return {
    state: "pending",
    priority: 0,
    firstRequestAt: at,
    lastRequestAt: at,
    dueAt: at,
    fileChecks: 0,
    attempts: 0,
    requests: [],
    requestsDropped: 0,
    targets: [],
    deliveries: [],
    ...fields,
  };
}

/** An in-memory queue port for tests of the HTTP surface alone (the real queue is tested through the service). */
export function createMemoryQueue(items: Item[] = []): QueueAdmin & { items: Item[] } {
  const page = (list: Item[], offset = 0, limit = 100) => ({ items: list.slice(offset, offset + limit), total: list.length });
  return {
    items,
    pendingCount: () => items.length,
    listPending: (query = {}) => page(items, query.offset, query.limit),
    listHistory: (query = {}) => page(items, query.offset, query.limit),
    getItem: (id) => items.find((item) => String(item.id) === id),
    sources: () => [...new Set(items.flatMap((item) => item.requests.map((r) => r.source)))],
    retry: (id) => items.some((item) => String(item.id) === id),
    retryFailed: () => items.filter((item) => item.state === "failed").length,
    remove(id) {
      const index = items.findIndex((item) => String(item.id) === id);
      if (index >= 0) items.splice(index, 1);
      return index >= 0;
    },
  };
}

export interface LogCapture {
  readonly lines: Record<string, unknown>[];
  readonly text: () => string;
}

export function createLogCapture(level: pino.Level = "debug"): { log: pino.Logger; capture: LogCapture } {
  const lines: Record<string, unknown>[] = [];
  const raw: string[] = [];
  const log = pino(
    { level },
    {
      write(line: string) {
        raw.push(line);
        lines.push(JSON.parse(line) as Record<string, unknown>);
      },
    },
  );
  return { log, capture: { lines, text: () => raw.join("") } };
}

export const TEST_MAPPINGS: PathMappings = {
  "/data/Movies/": ["/mnt/unionfs/Movies/", "My Drive/Media/Movies/"],
  "/data/TV/": ["/tv/", "C:\\Media\\TV\\"],
};

export function buildWebApp(overrides: Partial<WebOptions> = {}) {
  const recorder = createRecordingSink();
  const queue = createMemoryQueue();
  const { log, capture } = createLogCapture();
  const options: WebOptions = {
    sink: recorder.sink,
    mapper: createPathMapper({ mappings: TEST_MAPPINGS }),
    queue,
    health: () => ({ ready: true }),
    log,
    serverPass: TEST_PASS,
    allowManualScan: true,
    ignoreList: ["/.grab/", "Thumbs.db"],
    ...overrides,
  };
  return { app: createApp(options), recorder, queue, capture, options };
}
