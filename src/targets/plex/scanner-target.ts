import type { Clock } from "../../core/clock.ts";
import { TargetConfigError, TargetUnavailableError } from "../../core/errors.ts";
import type { Logger } from "../../core/logger.ts";
import type { ItemRefresher, LibraryLookup, ScanContext, ScanOutcome, Target } from "../../core/target.ts";
import type { OutputLine } from "../../docker/command-runner.ts";
import { ExecInterruptedError } from "../../docker/errors.ts";
import { formatDuration } from "../../core/format-duration.ts";
import { scanArgs, type PlexScanner } from "../../docker/plex-scanner.ts";
import type { AfterScan } from "./after-scan.ts";

/**
 * `PLEX_SCAN_METHOD: "scanner"`: each queued folder is scanned by `Plex Media Scanner --scan --refresh --section <id>
 * --directory <folder>` inside the Plex container (or on this host), one run at a time. The exit code decides:
 * non-zero is a failure the queue retries; the "'--scan' operation is deprecated" notice Plex ≥ 1.28.1 prints on
 * every run is not (integrations.md §3.2).
 */
export interface ScannerTargetOptions {
  readonly scanner: PlexScanner;
  /** Which sections hold a folder (server form); `[]` when none. */
  readonly sections: { resolve(folder: string, signal?: AbortSignal): Promise<readonly { id: string }[]> };
  /** PLEX_SCANNER_TIMEOUT in ms. */
  readonly timeoutMs: number;
  /** PLEX_WAIT_FOR_EXTERNAL_SCANNERS: wait while another `Plex Media Scanner` runs there. */
  readonly waitForExternalScanners: boolean;
  /** Between checks for other scanners; default 60 s (plex_autoscan's). */
  readonly externalScannerPollMs?: number;
  /** Give up waiting for other scanners after this long and scan anyway; default `timeoutMs`. */
  readonly externalScannerMaxWaitMs?: number;
  /** Analysis and emptying the trash once the scan is done (needs PLEX_TOKEN); absent = neither. */
  readonly afterScan?: AfterScan;
  /** Asks Plex's library (its API, so it needs PLEX_TOKEN) whether requested files landed; absent = cannot be asked. */
  readonly lookup?: LibraryLookup;
  /** Refresh in place of one item (refresh-asking requests, after the landed look saw it); absent = cannot. */
  readonly refresher?: ItemRefresher;
  readonly clock: Clock;
  readonly log: Logger;
}

/** The scanner ran and exited non-zero: retried with backoff by the queue. */
export class ScannerFailedError extends Error {
  override name = "ScannerFailedError";
  readonly exitCode: number;
  constructor(message: string, exitCode: number) {
    super(message);
    this.exitCode = exitCode;
  }
}

const DEPRECATION = /'--scan' operation is deprecated/;
const TROUBLE = /\b(error|errors|exception|fatal|critical|failed|failure)\b/i;

export function createScannerTarget(options: ScannerTargetOptions): Target {
  const { scanner, clock } = options;
  const log = options.log.child({ component: "PLEX" });
  let queue: Promise<unknown> = Promise.resolve();
  // One scanner run at a time in the container: Plex's own scanners contend for the same database.
  const exclusive = <T>(work: () => Promise<T>): Promise<T> => {
    const run = queue.then(work, work);
    queue = run.catch(() => undefined);
    return run;
  };

  async function scanSection(folder: string, section: string, context: ScanContext, log: Logger): Promise<void> {
    log.debug({ section, path: folder }, `Using Section ID '${section}' for '${folder}'`);
    log.info({ section, path: folder, attempt: context.attempt }, `Running Plex Media Scanner for: ${folder}`);
    const result = await scanner
      .run(scanArgs(section, folder), { timeoutMs: options.timeoutMs, signal: context.signal, onLine: (line) => logLine(log, line) })
      .catch((error: unknown) => {
        // Shutting down mid-scan is not the folder's failure: keep it queued for the next start.
        if (error instanceof ExecInterruptedError) throw new TargetUnavailableError(error.message, { cause: error });
        throw error;
      });
    if (result.exitCode !== 0) {
      const said = lastLines(result.stderr || result.stdout);
      log.error({ section, path: folder, exitCode: result.exitCode }, `Plex Media Scanner failed for: ${folder}`);
      throw new ScannerFailedError(
        `Plex Media Scanner exited with code ${result.exitCode} for '${folder}' (section ${section})` +
          (said ? `: ${said}` : ""),
        result.exitCode,
      );
    }
    log.debug({ section, path: folder, durationMs: result.durationMs }, "Plex Media Scanner exited with code 0");
  }

  let lastAvailability: "up" | "down" | undefined;
  return {
    name: "plex-scanner",
    ...(options.lookup ? { lookup: options.lookup } : {}),
    ...(options.refresher ? { refresher: options.refresher } : {}),
    async scan(folder, context) {
      const sections = await options.sections.resolve(folder, context.signal);
      if (sections.length === 0) {
        log.warn({ path: folder }, `Unable to map '${folder}' to a Section ID.`);
        return { status: "skipped", reason: "the folder is in no Plex library section" } satisfies ScanOutcome;
      }
      const ids = sections.map((section) => section.id);
      await exclusive(async () => {
        if (options.waitForExternalScanners) await waitForOtherScanners(context.signal, log);
        if (context.signal.aborted) throw new TargetUnavailableError("Shutting down before the scan started");
        for (const id of ids) await scanSection(folder, id, context, log);
        log.debug({ path: folder }, "Plex Media Scanner finished.");
      });
      const notes = options.afterScan ? await options.afterScan.run(ids, context) : [];
      const detail = [`section${ids.length > 1 ? "s" : ""} ${ids.join(", ")}`, ...notes].join("; ");
      return { status: "scanned", detail } satisfies ScanOutcome;
    },
    async isAvailable() {
      let state: "up" | "down" = "up";
      try {
        await scanner.assertAvailable();
      } catch (error) {
        if (!(error instanceof TargetUnavailableError || error instanceof TargetConfigError)) throw error;
        state = "down";
        if (lastAvailability !== "down") log.warn({ err: error }, "The Plex scanner cannot run now; scans wait in the queue");
      }
      if (state === "up" && lastAvailability === "down") log.info(`The Plex scanner can run again (${scanner.where})`);
      lastAvailability = state;
      return state === "up";
    },
  };

  /** plex_autoscan's wait: poll the process list until no `Plex Media Scanner` runs; bounded here, and logged. */
  async function waitForOtherScanners(signal: AbortSignal, log: Logger): Promise<void> {
    const pollMs = options.externalScannerPollMs ?? 60_000;
    const maxWaitMs = options.externalScannerMaxWaitMs ?? options.timeoutMs;
    const started = clock.now();
    for (;;) {
      let running;
      try {
        running = await scanner.runningScanners();
      } catch (error) {
        log.warn({ err: error }, `Could not list the processes (${scanner.where}); not waiting for other scanners`);
        return;
      }
      if (running.length === 0) return void log.debug("No 'Plex Media Scanner' processes were found.");
      const pids = running.map((process) => process.pid);
      if (clock.now() - started >= maxWaitMs) {
        log.warn({ pids }, `'Plex Media Scanner' is still running after ${formatDuration(maxWaitMs)}; scanning anyway`);
        return;
      }
      if (signal.aborted) return;
      // The first wait is news; each further poll of the same wait is not.
      log[clock.now() === started ? "info" : "debug"](
        { pids },
        `'Plex Media Scanner' is running, pid: ${pids.join(", ")}. Checking again in ${inSeconds(pollMs)}...`,
      );
      await clock.sleep(pollMs, signal);
    }
  }
}

/** plex_autoscan logged scanner lines of 8+ characters; the deprecation notice is expected noise. */
function logLine(log: Logger, line: OutputLine): void {
  const text = line.text.trim();
  if (text.length < 8) return;
  if (DEPRECATION.test(text)) return void log.debug({ stream: line.stream }, text);
  if (TROUBLE.test(text)) return void log.warn({ stream: line.stream }, text);
  log.debug({ stream: line.stream }, text);
}

/** plex_autoscan's words: `Checking again in 60 seconds...`. */
function inSeconds(ms: number): string {
  return ms >= 1000 ? `${Math.round(ms / 1000)} seconds` : `${ms} ms`;
}

function lastLines(output: string): string {
  const lines = output
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !DEPRECATION.test(line));
  const tail = lines.slice(-3).join(" | ");
  return tail.length > 500 ? `…${tail.slice(-500)}` : tail;
}
