import { StoreUnavailableError, describeError } from "../core/errors.ts";
import type { Logger } from "../core/logger.ts";
import type { EnqueueResult, EnqueuedItem, ScanRequest, ScanSink } from "../core/scan.ts";
import type { PathMapper, PathMappings } from "../paths/mapping.ts";
import { unroutableReason, type Unroutable } from "../paths/unroutable.ts";

/**
 * Hands requests to the sink and waits until they are durable. A 2xx is only ever sent after this resolves `ok`:
 * an *arr app that gets 2xx forgets the event, so we must not lose it afterwards. A 503 is only ever sent for
 * requests that were not stored and never will be: after `timeoutMs` the requests still waiting in front of the store
 * are withdrawn (and the sender is told to send them again); requests already on their way to the disk are waited
 * for, however long the disk takes, because telling the sender to retry them would scan them twice.
 */
export type Submitted =
  | { readonly ok: true; readonly result: EnqueueResult }
  | { readonly ok: false; readonly reason: string };

export async function submitScans(
  sink: ScanSink,
  requests: readonly ScanRequest[],
  timeoutMs: number,
  log: Logger,
  origin?: string,
  confirmed = false,
): Promise<Submitted> {
  const giveUp = new AbortController();
  const timer = setTimeout(() => giveUp.abort(), timeoutMs);
  try {
    return { ok: true, result: await sink(requests, { signal: giveUp.signal, ...(origin ? { origin } : {}), ...(confirmed ? { confirmed } : {}) }) };
  } catch (error) {
    if (giveUp.signal.aborted) {
      log.warn({ count: requests.length, timeoutMs }, "The queue did not take a scan request in time; nothing was queued");
      const seconds = String(Math.round(timeoutMs / 1000));
      return { ok: false, reason: `Nothing was queued: the queue did not take the request within ${seconds} s; send it again` };
    }
    // The store logs a write fault once per episode, with its cause and fix; other failures are logged here.
    if (error instanceof StoreUnavailableError) log.debug({ err: error, count: requests.length }, "Scan request refused");
    else log.error({ err: error, count: requests.length }, "The queue could not store a scan request; nothing was queued");
    return { ok: false, reason: `Nothing was queued: ${describeError(error)}` };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Behind the queue's sink: a request no server can scan (its path matches no `SERVER_PATH_MAPPINGS` form and lies in
 * no library) is not left waiting for ten file checks. The request is stored and answered first, as any other (an
 * *arr app must not disable the connection over it, and a slow or hung media server never delays or fails a 2xx);
 * right after, off the request's path, `judge` asks whether a library holds it. One that none holds leaves the queue
 * for History as failed with the reason (`refuse`), and is said once, as a WARNING naming the path, the key and the
 * fix. A request the user confirmed after seeing the Scan page's preview is not judged. The console's Queue page
 * shows the last ones until dismissed; doctor reads them from History. `judge` answers undefined when the path is
 * fine, and also when it cannot tell (the libraries could not be read): then the request waits as any other.
 */
export interface UnroutableGuardOptions {
  readonly sink: ScanSink;
  /** Moves waiting folders to History as failed; answers the ids it failed (the queue's `refuseWaiting`). */
  readonly refuse: (refused: readonly { readonly id: number; readonly reason: string }[]) => Promise<readonly number[]>;
  readonly judge: (request: ScanRequest) => Promise<Unroutable | undefined>;
  readonly log: Logger;
  readonly clock: { now(): number };
  /** How many refused paths the console keeps (default 20). */
  readonly keep?: number;
  /** How many stored requests may wait for a verdict at once (default 10,000); beyond, they wait as any other. */
  readonly maxJudging?: number;
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
  const maxJudging = options.maxJudging ?? 10_000;
  let recent: RefusedPath[] = [];
  let judging = 0;

  /** The verdicts of one stored batch: a folder is refused when every request of the batch in it is unroutable. */
  async function judgeStored(requests: readonly ScanRequest[], items: readonly EnqueuedItem[]): Promise<void> {
    const verdicts = await Promise.all(requests.map((request) => options.judge(request).catch(() => undefined)));
    const byItem = new Map<number, { request: ScanRequest; verdict: Unroutable | undefined }[]>();
    requests.forEach((request, index) => {
      const id = items[index]?.id;
      if (id !== undefined) byItem.set(id, [...(byItem.get(id) ?? []), { request, verdict: verdicts[index] }]);
    });
    const refused = [...byItem].flatMap(([id, entries]) => {
      const first = entries[0];
      return first?.verdict && entries.every((entry) => entry.verdict) ? [{ id, request: first.request, verdict: first.verdict }] : [];
    });
    if (refused.length === 0) return;
    const failed = new Set(await options.refuse(refused.map(({ id, verdict }) => ({ id, reason: verdict.reason }))));
    const said = new Set<string>();
    for (const { id, request, verdict } of refused) {
      if (!failed.has(id) || said.has(verdict.reason)) continue;
      said.add(verdict.reason);
      const path = request.receivedPath ?? request.path;
      log.warn({ id, path, source: request.source, event: request.event, nearest: verdict.nearest }, `${verdict.reason} From ${request.source}; History shows it as failed. Fix: ${verdict.fix}`);
      recent = [{ path, source: request.source, reason: verdict.reason, fix: verdict.fix, at: clock.now() }, ...recent.filter((r) => r.path !== path)].slice(0, keep);
    }
  }

  const sink: ScanSink = async (requests, sinkOptions) => {
    const result = await options.sink(requests, sinkOptions);
    if (sinkOptions?.confirmed || judging + requests.length > maxJudging) return result;
    judging += requests.length;
    // Judged on the next turn of the event loop: the answer goes out first, whatever the judge costs.
    setImmediate(() => {
      judgeStored(requests, result.items)
        .catch((error: unknown) => log.warn({ err: error }, "Could not move a request no server can scan to History; it waits as any other"))
        .finally(() => (judging -= requests.length));
    });
    return result;
  };

  return { sink, recent: () => recent, dismiss: () => void (recent = []) };
}

/**
 * Whether a request can be scanned anywhere (the guard's `judge`): a path that matches no `SERVER_PATH_MAPPINGS` form
 * is looked up in Plex's libraries (the section list the Plex target uses, cached: a list being loaded is waited for,
 * as long as the list's own load may take); in none, it is unroutable. A mapped path is never looked up. Undefined —
 * it waits as any other — whenever it cannot be told: Plex not set up or not answering, or other targets (TARGETS)
 * whose libraries may hold it.
 */
export interface UnroutableJudgeInput {
  readonly mapper: Pick<PathMapper, "toServer">;
  /** The current `SERVER_PATH_MAPPINGS` (a reload changes them). */
  readonly mappings: () => PathMappings;
  readonly sections: { resolve(folder: string, signal?: AbortSignal): Promise<readonly unknown[]> } | undefined;
  /** Other targets are configured: a path in no Plex library may be in theirs. */
  readonly otherTargets: () => boolean;
}

export function unroutableJudge(input: UnroutableJudgeInput): (request: ScanRequest) => Promise<Unroutable | undefined> {
  return async (request) => {
    const received = request.receivedPath ?? request.path;
    if (!input.sections || input.otherTargets() || input.mapper.toServer(received).known) return undefined;
    const held = await input.sections.resolve(request.path).catch(() => undefined);
    return held === undefined || held.length > 0 ? undefined : unroutableReason(received, request.path, input.mappings());
  };
}
