import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { ScanRequest } from "../../src/core/scan.ts";
import type { Target } from "../../src/core/target.ts";
import { createDispatcher, type Dispatcher, type DispatcherOptions } from "../../src/queue/dispatch/dispatcher.ts";
import { type ScanQueue } from "../../src/queue/scan-queue.ts";
import { createScanQueue, type ScanQueueOptions } from "../../src/queue/open-scan-queue.ts";
import { captureLog, makeTempDir } from "./capture-log.ts";
import { createManualClock, type ManualClock } from "./manual-clock.ts";
import type { QueuePlace } from "./queue-adapters.ts";

/**
 * A real queue file and a real dispatcher on a manual clock. Server paths (`/tv/…`) live under `<temp>/media` on
 * autoscan's disk, so file checks look at real files the test creates.
 */
export interface QueueHarness {
  readonly clock: ManualClock;
  readonly queue: ScanQueue;
  readonly dispatcher: Dispatcher;
  readonly logs: ReturnType<typeof captureLog>;
  readonly dir: string;
  /** Moves the clock, letting the dispatcher finish what each step starts. */
  advance(ms: number): Promise<void>;
  settle(): Promise<void>;
  /** Creates the file (or folder, for a path ending in `/`) on the local disk. */
  touch(serverPath: string): Promise<void>;
  enqueue(...requests: ScanRequest[]): Promise<void>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  readonly targets: readonly Target[];
  readonly queue?: Partial<ScanQueueOptions>;
  readonly dispatcher?: Partial<DispatcherOptions>;
  /** Reuse a folder (a restart); default a fresh temp folder. */
  readonly dir?: string;
  readonly clock?: ManualClock;
  /** Where the queue lives (PostgreSQL, see `queue-adapters.ts`); default `<dir>/queue.db`. */
  readonly place?: QueuePlace;
}

export const SCAN_DELAY_MS = 180_000;
export const CHECK_DELAY_MS = 60_000;

export async function createQueueHarness(options: HarnessOptions): Promise<QueueHarness> {
  const temp = options.dir ? undefined : await makeTempDir("autoscan-queue-");
  const dir = options.dir ?? temp?.dir ?? "";
  const clock = options.clock ?? createManualClock();
  const logs = captureLog();
  const media = join(dir, "media");
  await mkdir(media, { recursive: true });
  const queueOptions = { clock, log: logs.log, scanDelayMs: SCAN_DELAY_MS, ...options.queue };
  const queue = options.place
    ? await options.place.open(queueOptions)
    : await createScanQueue({ file: join(dir, "queue.db"), ...queueOptions });
  const dispatcher = createDispatcher({
    queue,
    targets: options.targets,
    clock,
    log: logs.log,
    localForms: (path) => [join(media, path)],
    maxFileChecks: 10,
    fileCheckDelayMs: CHECK_DELAY_MS,
    random: () => 0.5,
    ...options.dispatcher,
  });
  dispatcher.start();
  const settle = (): Promise<void> => dispatcher.whenIdle();
  return {
    clock,
    queue,
    dispatcher,
    logs,
    dir,
    settle,
    advance: (ms) => clock.advance(ms, settle),
    async touch(serverPath) {
      const local = join(media, serverPath);
      if (serverPath.endsWith("/")) return void (await mkdir(local, { recursive: true }));
      await mkdir(dirname(local), { recursive: true });
      await writeFile(local, "");
    },
    async enqueue(...requests) {
      await queue.enqueue(requests);
      await settle();
    },
    async close() {
      await dispatcher.stop({ timeoutMs: 1000 });
      await queue.close();
      await temp?.cleanup();
    },
  };
}

export const fileRequest = (path: string, source = "Sonarr", extra: Partial<ScanRequest> = {}): ScanRequest => ({
  path,
  kind: "file",
  source,
  event: "Download",
  ...extra,
});
