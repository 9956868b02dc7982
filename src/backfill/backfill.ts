import type { AppProblem, BackfillAppStatus } from "../core/backfill-status.ts";
import type { Clock } from "../core/clock.ts";
import { describeError } from "../core/errors.ts";
import type { Logger } from "../core/logger.ts";
import type { ScanRequest, ScanSink } from "../core/scan.ts";
import type { CursorStore } from "./cursor-store.ts";
import { readHistory, type HistoryPages, type HistoryRecordLike, type ReadProgress, type ReadResult } from "./read-history.ts";

/**
 * Catching up from the *arr apps' history (`ARR`): at start and every `SERVER_BACKFILL_INTERVAL`, each app's history
 * is read back to its cursor (with a second of overlap) and what the queue does not have yet is queued. The cursor
 * moves only once the whole read is stored. An app that is down, refuses its key or answers in a way we do not
 * understand is a state (logged when it changes, shown by the console and doctor); the other apps go on, and its
 * cursor stays where it was. The first read of an app autoscan has no cursor for starts from now: no flood of old
 * history; `autoscan backfill --since` reads further back on purpose.
 */
export interface BackfillApp<R extends HistoryRecordLike = HistoryRecordLike> {
  /** The name in `ARR` (also the webhook label). */
  readonly name: string;
  readonly pages: HistoryPages<R>;
  readonly toRequests: (record: R) => ScanRequest[];
  /** Sorts an error of this app's client into what the state shows ("down", "auth", "api"). */
  readonly classify: (error: unknown) => AppProblem;
}

export interface BackfillOptions<R extends HistoryRecordLike = HistoryRecordLike> {
  readonly apps: readonly BackfillApp<R>[];
  readonly cursors: CursorStore;
  readonly sink: ScanSink;
  readonly isCovered: (request: ScanRequest, since: number) => Promise<boolean>;
  readonly clock: Clock;
  readonly log: Logger;
  /** `SERVER_BACKFILL_INTERVAL` in ms. */
  readonly intervalMs: number;
  readonly pageSize?: number;
  /** `SERVER_METRICS`: reads by app and result, requests queued. */
  readonly metrics?: { backfillRead(app: string, result: "ok" | AppProblem, queued: number): void };
}


export interface RunOptions {
  /** Read back to this time (ms) instead of the cursor. */
  readonly since?: number;
  /** Only this app. */
  readonly app?: string;
  /** List what would be queued; queue nothing, move no cursor. */
  readonly dryRun?: boolean;
  readonly onProgress?: (app: string, progress: ReadProgress) => void;
  readonly onRequest?: (app: string, request: ScanRequest, recordDate: number) => void;
  readonly signal?: AbortSignal;
}

export interface RunSummary {
  readonly app: string;
  readonly ok: boolean;
  readonly result?: ReadResult;
  readonly error?: string;
}

export interface Backfill {
  start(): void;
  stop(): Promise<void>;
  /** One read of every app (or one), now; reads never overlap. */
  run(options?: RunOptions): Promise<RunSummary[]>;
  status(): BackfillAppStatus[];
}

export function createBackfill<R extends HistoryRecordLike>(options: BackfillOptions<R>): Backfill {
  const log = options.log.child({ component: "BACKFILL" });
  const { clock, cursors } = options;
  const states = new Map<string, BackfillAppStatus>(options.apps.map((app) => [app.name, { name: app.name, state: "waiting", ...cursorOf(app.name) }]));
  const stopping = new AbortController();
  let loop: Promise<void> | undefined;
  let chain: Promise<unknown> = Promise.resolve();

  function cursorOf(name: string): { cursor?: { date: number; id: number } } {
    const cursor = cursors.get(name);
    return cursor ? { cursor } : {};
  }

  function update(name: string, next: Partial<BackfillAppStatus>): void {
    const current = states.get(name) ?? { name, state: "waiting" as const };
    states.set(name, { ...current, ...next, ...cursorOf(name) });
  }

  async function readApp(app: BackfillApp<R>, run: RunOptions): Promise<RunSummary> {
    const cursor = cursors.get(app.name);
    const first = cursor === undefined && run.since === undefined;
    try {
      if (first) {
        // The first read starts from now: the newest record becomes the cursor, nothing older is queued.
        const { records } = await app.pages.historyPage(1, 1, run.signal);
        const newest = records[0];
        // An empty history: everything written from now on is new, whatever the app's clock says.
        const start = newest ? { date: newest.date, id: newest.id } : { date: 0, id: 0 };
        if (!run.dryRun) await cursors.set(app.name, start);
        log.info({ app: app.name }, `Reading '${app.name}' history from now on (the first read; use \`autoscan backfill --since\` to read further back).`);
        return done(app, { pages: 1, records: records.length, queued: 0, covered: 0, newest: start }, run);
      }
      // A second of overlap: v4-era apps date records to the whole second, so others may share the cursor's second.
      const from = run.since ?? (cursor?.date ?? clock.now()) - 1000;
      const result = await readHistory({
        pages: app.pages,
        toRequests: app.toRequests,
        from,
        ...(run.since === undefined && cursor ? { after: cursor } : {}),
        isCovered: options.isCovered,
        ...(run.dryRun ? {} : { sink: options.sink }),
        ...(options.pageSize ? { pageSize: options.pageSize } : {}),
        ...(run.signal ? { signal: run.signal } : {}),
        ...(run.onProgress ? { onProgress: (progress: ReadProgress) => run.onProgress?.(app.name, progress) } : {}),
        ...(run.onRequest ? { onRequest: (request: ScanRequest, record: HistoryRecordLike) => run.onRequest?.(app.name, request, record.date) } : {}),
      });
      // A read from `since` moves the cursor only when it began at or before the cursor: one that began later did not
      // read what lies between the cursor and `since`.
      const readFromCursor = run.since === undefined || !cursor || run.since <= cursor.date - 1000;
      if (!run.dryRun && readFromCursor && result.newest && (!cursor || isNewer(result.newest, cursor))) {
        await cursors.set(app.name, result.newest);
      }
      return done(app, result, run);
    } catch (error) {
      if (run.signal?.aborted) return { app: app.name, ok: false, error: "stopped" };
      const problem = app.classify(error);
      const message = describeError(error);
      const before = states.get(app.name);
      if (before?.state !== problem || before.problem?.message !== message) {
        const level = problem === "down" ? "warn" : "error";
        log[level]({ app: app.name, err: error }, `Could not read '${app.name}' history: ${message}. Its cursor stays; the next read catches up.`);
      }
      update(app.name, { state: problem, problem: { since: before?.problem?.since ?? clock.now(), message } });
      options.metrics?.backfillRead(app.name, problem, 0);
      return { app: app.name, ok: false, error: message };
    }
  }

  function done(app: BackfillApp<R>, result: ReadResult, run: RunOptions): RunSummary {
    const before = states.get(app.name);
    if (!run.dryRun) {
      if (before?.problem) log.info({ app: app.name }, `'${app.name}' answers again; its history is read.`);
      if (result.queued > 0) {
        log.info(
          { app: app.name, records: result.records, queued: result.queued, covered: result.covered },
          `Backfill from '${app.name}': ${result.queued} request(s) queued that no webhook brought (${result.records} history record(s) read).`,
        );
      }
      const lastRead = { at: clock.now(), records: result.records, queued: result.queued, covered: result.covered };
      states.set(app.name, { name: app.name, state: "ok", lastRead, ...cursorOf(app.name) });
      options.metrics?.backfillRead(app.name, "ok", result.queued);
    }
    return { app: app.name, ok: true, result };
  }

  function run(requested: RunOptions = {}): Promise<RunSummary[]> {
    // A stop ends every read, also one asked for through the API.
    const signal = requested.signal ? AbortSignal.any([requested.signal, stopping.signal]) : stopping.signal;
    const runOptions: RunOptions = { ...requested, signal };
    const task = async (): Promise<RunSummary[]> => {
      const apps = options.apps.filter((app) => runOptions.app === undefined || app.name === runOptions.app);
      const out: RunSummary[] = [];
      for (const app of apps) {
        if (stopping.signal.aborted) break;
        out.push(await readApp(app, runOptions));
      }
      return out;
    };
    const next = chain.then(task, task);
    chain = next.catch(() => undefined);
    return next;
  }

  return {
    start() {
      if (loop || options.apps.length === 0) return;
      loop = (async () => {
        while (!stopping.signal.aborted) {
          await run({ signal: stopping.signal }).catch((error: unknown) => log.error({ err: error }, "The backfill failed"));
          await clock.sleep(options.intervalMs, stopping.signal);
        }
      })();
    },
    async stop() {
      stopping.abort();
      await loop;
      await chain;
    },
    run,
    status: () => options.apps.map((app) => states.get(app.name) ?? { name: app.name, state: "waiting" }),
  };
}

function isNewer(a: { date: number; id: number }, b: { date: number; id: number }): boolean {
  return a.date > b.date || (a.date === b.date && a.id > b.id);
}
