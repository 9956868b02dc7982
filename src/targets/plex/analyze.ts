import type { Clock } from "../../core/clock.ts";
import { describeError } from "../../core/errors.ts";
import type { Logger } from "../../core/logger.ts";
import type { PlexClient } from "./client.ts";
import type { LibraryIndex, LibraryItem } from "./library-db.ts";
import type { LibraryGate } from "./library-gate.ts";

/**
 * `PLEX_ANALYZE_TYPE` / `PLEX_ANALYZE_DIRECTORY` after a scan, as plex_autoscan did them (plex_autoscan.md §3 step 9):
 * find the scanned files' items in the library database, then analyze the item (or its season/album with
 * `PLEX_ANALYZE_DIRECTORY`). `basic` goes through the API (`PUT /library/metadata/{id}/analyze`); `deep` has no API
 * and needs `Plex Media Scanner --analyze-deeply --item <ids>` through the scanner executor.
 *
 * The item lookup is retried: Plex only queues a partial scan, so the item may not exist yet when we first look
 * (the reason Cloudbox/autoscan declined analysis, #146).
 */
export type AnalyzeType = "off" | "basic" | "deep";

export type RunScanner = (argv: string[]) => Promise<{ exitCode: number; stdout: string; stderr: string }>;

export interface AnalyzerOptions {
  readonly type: AnalyzeType;
  /** `PLEX_ANALYZE_DIRECTORY`: analyze the parent (season, album) rather than the file's own item. */
  readonly directory: boolean;
  readonly client: Pick<PlexClient, "analyzeItem">;
  /** Where items are looked up (`PLEX_DATABASE_PATH`); without it there is nothing to analyze by id. */
  readonly library?: LibraryIndex;
  /** Whether `library` can be read now; it says once why not (the start-up check), so analysis skips quietly. */
  readonly gate: Pick<LibraryGate, "usable" | "failed">;
  /** The scanner executor (Docker exec into the Plex container); `deep` needs it. */
  readonly runScanner?: RunScanner;
  readonly clock: Clock;
  readonly log: Logger;
  /** Item lookups before giving up on files not in Plex yet (default 5), and the pause between them (10 s). */
  readonly lookupTries?: number;
  readonly lookupDelayMs?: number;
}

export interface Analyzer {
  readonly enabled: boolean;
  /** Analyzes the items of `files` (server form); logs and never throws. Returns a short note for the outcome. */
  analyze(files: readonly string[], signal?: AbortSignal): Promise<string | undefined>;
}

const SKIPPED = "analysis skipped: Plex's database cannot be read";

export function createAnalyzer(options: AnalyzerOptions): Analyzer {
  const log = options.log.child({ component: "PLEX" });
  const { library, clock } = options;
  const tries = Math.max(1, options.lookupTries ?? 5);
  const delayMs = options.lookupDelayMs ?? 10_000;
  const enabled = options.type !== "off";
  if (options.type === "deep" && !options.runScanner) {
    log.warn("PLEX_ANALYZE_TYPE 'deep' needs the Plex Media Scanner executor (Docker); using basic analysis instead");
  }

  // The same failure at every scan (the database not mounted) is told once, then again only when it changes.
  let lastFailure: string | undefined;

  async function findItems(files: readonly string[], log: Logger, signal?: AbortSignal): Promise<LibraryItem[]> {
    let items: LibraryItem[] = [];
    for (let attempt = 1; attempt <= tries; attempt++) {
      items = (await library?.findItems(files)) ?? [];
      const missing = files.filter((file) => !items.some((item) => item.file === file));
      if (missing.length === 0 || signal?.aborted) return items;
      if (attempt < tries) {
        log.debug({ missing, attempt }, `Not in Plex yet; looking again in ${Math.round(delayMs / 1000)} seconds...`);
        await clock.sleep(delayMs, signal);
      } else {
        log.warn({ missing }, `Could not find ${missing.length} file(s) in the Plex library to analyze`);
      }
    }
    return items;
  }

  async function run(ids: string[], deep: boolean, signal?: AbortSignal): Promise<void> {
    if (deep && options.runScanner) {
      const result = await options.runScanner(["--analyze-deeply", "--item", ids.join(",")]);
      if (result.exitCode !== 0) {
        throw new Error(`Plex Media Scanner --analyze-deeply exited ${result.exitCode}: ${result.stderr.trim().slice(0, 200)}`);
      }
      return;
    }
    for (const id of ids) await options.client.analyzeItem(id, signal);
  }

  return {
    enabled,
    async analyze(files, signal) {
      if (!enabled || files.length === 0) return undefined;
      if (!library || !(await options.gate.usable())) {
        log.debug("Skipping analysis: Plex's database cannot be read (PLEX_DATABASE_PATH; said at start)");
        return SKIPPED;
      }
      let stage: "database" | "plex" = "database";
      try {
        const items = await findItems(files, log, signal);
        if (items.length === 0) return "nothing to analyze";
        const deep = options.type === "deep" && options.runScanner !== undefined;
        const ids = await analysisTargets(items, options.directory, deep, library);
        stage = "plex";
        log.debug({ items: ids }, `Starting ${deep ? "deep" : "basic"} analysis of ${ids.length} item(s)...`);
        await run(ids, deep, signal);
        log.info({ items: ids }, `Analyzed ${ids.length} item(s) (${deep ? "deep" : "basic"}).`);
        lastFailure = undefined;
        return `analyzed ${ids.length} item(s)`;
      } catch (error) {
        // The mount may have gone: the gate looks again and says so once; then this is no news.
        if (stage === "database" && !(await options.gate.failed(error))) return SKIPPED;
        const why = describeError(error);
        if (why !== lastFailure) {
          const fix =
            stage === "database"
              ? ` Check that PLEX_DATABASE_PATH is Plex's library database, or set PLEX_ANALYZE_TYPE to "off".`
              : "";
          log.warn({ err: error }, `Analysis after the scan failed: ${why}.${fix} (Said once until the cause changes.)`);
        } else {
          log.debug({ err: error }, "Analysis after the scan failed again (same cause)");
        }
        lastFailure = why;
        return `analysis failed: ${why}`;
      }
    },
  };
}

/**
 * What to analyze: each item, or with `directory` its parent (a movie has none, so itself). Deep analysis of a
 * parent goes through its children, as plex_autoscan did, since `--analyze-deeply` works on the given items.
 */
async function analysisTargets(
  items: readonly LibraryItem[],
  directory: boolean,
  deep: boolean,
  library: LibraryIndex,
): Promise<string[]> {
  const ids = new Set<string>();
  for (const item of items) {
    if (!directory || item.parentId === undefined) ids.add(item.id);
    else if (!deep) ids.add(item.parentId);
    else for (const child of await library.childrenOf(item.parentId)) ids.add(child);
  }
  return [...ids];
}
