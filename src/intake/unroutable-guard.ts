import type { Logger } from "../core/logger.ts";
import type { EnqueueResult, EnqueuedItem, ScanRequest, ScanSink } from "../core/scan.ts";
import type { PathMapper, PathMappings } from "../paths/mapping.ts";
import { unroutableReason, type Unroutable } from "../paths/unroutable.ts";

/**
 * In front of the queue's sink: a request no server can scan (its path matches no `SERVER_PATH_MAPPINGS` form and
 * lies in no library) is not queued for file checks. It is answered as accepted (an *arr app must not disable the
 * connection over it), stored straight into History as failed with the reason (`refuse`), and said once, as a
 * WARNING naming the path, the key and the fix; the answer's item says why (`ignoredBecause`). A request the user
 * confirmed after seeing the Scan page's preview is queued as it is. The console's Queue page shows the last ones until dismissed; doctor
 * reads them from History. `judge` answers undefined when the path is fine, and also when it cannot tell (the
 * libraries could not be read in time): then the request is queued as before.
 */
export interface UnroutableGuardOptions {
  readonly sink: ScanSink;
  readonly refuse: (requests: readonly ScanRequest[], reason: (folder: string) => string) => Promise<EnqueueResult>;
  readonly judge: (request: ScanRequest) => Promise<Unroutable | undefined>;
  readonly log: Logger;
  readonly clock: { now(): number };
  /** How many refused paths the console keeps (default 20). */
  readonly keep?: number;
}

export interface RefusedPath {
  readonly path: string;
  readonly source: string;
  readonly reason: string;
  readonly fix: string;
  readonly at: number;
}

export interface UnroutableGuard {
  readonly sink: ScanSink;
  /** The last refused paths, newest first, since the last dismissal. */
  recent(): readonly RefusedPath[];
  dismiss(): void;
}

export function createUnroutableGuard(options: UnroutableGuardOptions): UnroutableGuard {
  const { log, clock } = options;
  const keep = options.keep ?? 20;
  let recent: RefusedPath[] = [];

  const sink: ScanSink = async (requests, sinkOptions) => {
    if (sinkOptions?.confirmed) return options.sink(requests, sinkOptions);
    const verdicts = await Promise.all(requests.map((request) => options.judge(request).catch(() => undefined)));
    if (verdicts.every((verdict) => verdict === undefined)) return options.sink(requests, sinkOptions);
    const routable = requests.filter((_, index) => verdicts[index] === undefined);
    const refused = requests.flatMap((request, index) => {
      const verdict = verdicts[index];
      return verdict ? [{ request, verdict }] : [];
    });
    const reasons = new Map(refused.map(({ request, verdict }) => [request, verdict.reason]));
    const [queued, stored] = await Promise.all([
      routable.length ? options.sink(routable, sinkOptions) : Promise.resolve({ items: [] }),
      options.refuse(
        refused.map(({ request }) => request),
        (folder) => refused.find(({ request }) => request.path === folder || request.path.startsWith(`${folder}/`))?.verdict.reason ?? reasons.values().next().value ?? "",
      ),
    ]);
    const said = new Set<string>();
    for (const { request, verdict } of refused) {
      if (said.has(verdict.reason)) continue;
      said.add(verdict.reason);
      const path = request.receivedPath ?? request.path;
      log.warn({ path, source: request.source, event: request.event, nearest: verdict.nearest }, `${verdict.reason} From ${request.source}; History shows it as failed. Fix: ${verdict.fix}`);
      recent = [{ path, source: request.source, reason: verdict.reason, fix: verdict.fix, at: clock.now() }, ...recent.filter((r) => r.path !== path)].slice(0, keep);
    }
    // One entry per request, in order, as the sink answers.
    const fromQueue = [...queued.items];
    // A refused request says why it was not queued (the Scan page, `/triggers/manual` and another autoscan show it).
    const fromRefused = stored.items.map((item, index): EnqueuedItem => ({ ...item, ignoredBecause: refused[index]?.verdict.reason ?? "" }));
    const items = requests.map((_, index): EnqueuedItem => (verdicts[index] === undefined ? fromQueue.shift() : fromRefused.shift()) as EnqueuedItem);
    return { items };
  };

  return { sink, recent: () => recent, dismiss: () => void (recent = []) };
}

/**
 * Whether a request can be scanned anywhere (the guard's `judge`): a path that matches no `SERVER_PATH_MAPPINGS` form
 * is looked up in Plex's libraries (the section list the Plex target uses, cached); in none, it is unroutable. A mapped
 * path is never looked up. Undefined — queue as before — whenever it cannot be told in `budgetMs`: Plex not set up or
 * not answering, or other targets (TARGETS) whose libraries may hold it.
 */
export interface UnroutableJudgeInput {
  readonly mapper: Pick<PathMapper, "toServer">;
  /** The current `SERVER_PATH_MAPPINGS` (a reload changes them). */
  readonly mappings: () => PathMappings;
  readonly sections: { resolve(folder: string, signal?: AbortSignal): Promise<readonly unknown[]> } | undefined;
  /** Other targets are configured: a path in no Plex library may be in theirs. */
  readonly otherTargets: () => boolean;
  readonly budgetMs?: number;
}

export function unroutableJudge(input: UnroutableJudgeInput): (request: ScanRequest) => Promise<Unroutable | undefined> {
  const budgetMs = input.budgetMs ?? 1_000;
  return async (request) => {
    const received = request.receivedPath ?? request.path;
    if (!input.sections || input.otherTargets() || input.mapper.toServer(received).known) return undefined;
    const held = await input.sections.resolve(request.path, AbortSignal.timeout(budgetMs)).catch(() => undefined);
    return held === undefined || held.length > 0 ? undefined : unroutableReason(received, request.path, input.mappings());
  };
}
