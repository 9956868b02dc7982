import type { Clock } from "./clock.ts";
import type { Logger } from "./logger.ts";

/**
 * A server's list (Plex's sections, a Jellyfin or Emby server's library folders), cached: fetched again once older
 * than `refreshMs`, and on a miss (a library added after start-up must not need a restart) unless younger than
 * `missRefreshMs`, so a stream of unmapped paths does not become a stream of listings. Concurrent callers share one
 * request; while the server is briefly away, the list from before is used.
 *
 * The shared request is the cache's own, bounded by `loadTimeoutMs` (and the client's own timeout), never by a
 * caller's signal: each caller waits under its own signal, and one that gives up (its budget spent) leaves the request
 * running for the others.
 */
export interface ListCacheOptions<T> {
  readonly load: (signal?: AbortSignal) => Promise<T[]>;
  readonly clock: Clock;
  readonly log: Logger;
  /** Fields on every line (`{ target: "jellyfin" }`). */
  readonly fields?: Readonly<Record<string, unknown>>;
  /** What the list is, for the log lines: "the Plex sections". */
  readonly what: string;
  /** One entry as a log line reads it; a listing that differs from the one before is logged at debug. */
  readonly summary: (entry: T) => string;
  readonly refreshMs: number;
  readonly missRefreshMs: number;
  /** The shared request's own limit (default 2 min). */
  readonly loadTimeoutMs?: number;
}

export interface ListCache<T> {
  /** The list, from the cache when it is fresh. */
  list(signal?: AbortSignal): Promise<T[]>;
  /** Fetches the list now. */
  refresh(signal?: AbortSignal): Promise<T[]>;
  /** `match` on the list; on a miss, once more on a fresh list (unless the list is younger than `missRefreshMs`). */
  find<R>(match: (list: readonly T[]) => R[], signal?: AbortSignal, key?: string): Promise<R[]>;
}

const DEFAULT_LOAD_TIMEOUT_MS = 2 * 60_000;

export function createListCache<T>(options: ListCacheOptions<T>): ListCache<T> {
  const { clock, log, what } = options;
  const fields = options.fields ?? {};
  let cache: { entries: T[]; fetchedAt: number } | undefined;
  let inFlight: Promise<T[]> | undefined;
  const describe = (entries: readonly T[]): string => entries.map(options.summary).join("\n");

  function refresh(signal?: AbortSignal): Promise<T[]> {
    inFlight ??= options
      .load(AbortSignal.timeout(options.loadTimeoutMs ?? DEFAULT_LOAD_TIMEOUT_MS))
      .then((entries) => {
        const changed = !cache || describe(cache.entries) !== describe(entries);
        cache = { entries, fetchedAt: clock.now() };
        if (changed) log.debug({ ...fields, entries: entries.map(options.summary) }, `Loaded ${what}`);
        return entries;
      })
      .finally(() => {
        inFlight = undefined;
      });
    return waitUnder(inFlight, signal);
  }

  async function list(signal?: AbortSignal): Promise<T[]> {
    if (cache && clock.now() - cache.fetchedAt < options.refreshMs) return cache.entries;
    try {
      return await refresh(signal);
    } catch (error) {
      if (!cache) throw error;
      log.warn({ ...fields, err: error }, `Could not refresh ${what}; using the list from before`);
      return cache.entries;
    }
  }

  return {
    list,
    refresh,
    async find(match, signal, key) {
      const found = match(await list(signal));
      if (found.length > 0 || !cache || clock.now() - cache.fetchedAt < options.missRefreshMs) return found;
      log.debug({ ...fields, ...(key === undefined ? {} : { path: key }) }, `Nothing in ${what} holds this folder; fetching the list again`);
      return match(await refresh(signal));
    },
  };
}

/** `shared`, or the caller's own `signal.reason` as soon as it aborts (the shared work goes on). */
function waitUnder<T>(shared: Promise<T>, signal?: AbortSignal): Promise<T> {
  if (!signal) return shared;
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason as Error);
    signal.addEventListener("abort", onAbort, { once: true });
    shared.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}
