import type { Config } from "../../config/schema.ts";
import type { Clock } from "../../core/clock.ts";
import type { Logger } from "../../core/logger.ts";
import type { Target } from "../../core/target.ts";
import type { DispatchQueue, WorkRequest } from "../../queue/dispatch/dispatch-port.ts";
import type { DispatcherOptions } from "../../queue/dispatch/dispatcher.ts";
import type { ScanQueueOptions } from "../../queue/scan-queue.ts";

/**
 * Config → the queue's and the dispatcher's options. Seconds in the config become milliseconds here.
 * (`SERVER_USE_SQLITE: false` is reported as ignored by the config loader's notes: the queue is always durable.)
 */
export interface QueueWiringInput {
  readonly config: Config;
  /** Settings.queueFile (`--queuefile`, `AUTOSCAN_QUEUEFILE` / `PLEX_AUTOSCAN_QUEUEFILE`, default `<data>/queue.db`). */
  readonly queueFile: string;
  readonly clock: Clock;
  readonly log: Logger;
}

export function scanQueueOptionsFromConfig(input: QueueWiringInput): ScanQueueOptions {
  const { config } = input;
  return {
    file: input.queueFile,
    clock: input.clock,
    log: input.log,
    scanDelayMs: config.SERVER_SCAN_DELAY * 1000,
    priorities: config.SERVER_SCAN_PRIORITIES,
    historyMaxDays: config.SERVER_HISTORY_MAX_DAYS,
    historyMaxRows: config.SERVER_HISTORY_MAX_ROWS,
  };
}

export interface DispatcherWiringInput {
  readonly config: Config;
  readonly queue: DispatchQueue;
  readonly targets: readonly Target[];
  /** The path mapper's `localForms` (SERVER_FILE_EXIST_PATH_MAPPINGS, then SERVER_PATH_MAPPINGS reversed). */
  readonly localForms: (serverPath: string) => readonly string[];
  /** The rclone cache refresh, when RCLONE.RC_CACHE_REFRESH is on: before every check of a Google Drive file (so the
   *  mount shows it at the first check), and after a failed check for any other source (as plex_autoscan did). */
  readonly refreshMissing?: (localPath: string) => Promise<unknown>;
  /** The environment RUN_COMMAND_* run in (the process's, read by src/config). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly clock: Clock;
  readonly log: Logger;
}

/** The source name the drive monitor gives its requests. */
const DRIVE_SOURCE = "Google Drive";

export function dispatcherOptionsFromConfig(input: DispatcherWiringInput): DispatcherOptions {
  const { config, refreshMissing } = input;
  return {
    queue: input.queue,
    targets: input.targets,
    clock: input.clock,
    log: input.log,
    localForms: input.localForms,
    maxFileChecks: config.SERVER_MAX_FILE_CHECKS,
    fileCheckDelayMs: config.SERVER_FILE_CHECK_DELAY * 1000,
    scanFolderOnFileExistsExhaustion: config.SERVER_SCAN_FOLDER_ON_FILE_EXISTS_EXHAUSTION,
    concurrency: config.SERVER_SCAN_CONCURRENCY,
    retryMaxMs: config.SERVER_RETRY_MAX_HOURS * 3_600_000,
    commands: {
      before: config.RUN_COMMAND_BEFORE_SCAN,
      after: config.RUN_COMMAND_AFTER_SCAN,
      timeoutMs: config.SERVER_COMMAND_TIMEOUT * 1000,
      ...(input.env ? { baseEnv: input.env } : {}),
    },
    ...(refreshMissing
      ? {
          onFileMissing: async (_server: string, local: string) => void (await refreshMissing(local)),
          beforeFileCheck: async (request: WorkRequest, forms: readonly string[]) => {
            if (request.source !== DRIVE_SOURCE) return;
            for (const form of forms) await refreshMissing(form);
          },
        }
      : {}),
  };
}
