import type { Config } from "../../config/schema.ts";
import type { Clock } from "../../core/clock.ts";
import type { Logger } from "../../core/logger.ts";
import type { DispatchMetrics, TargetCallMetrics } from "../../core/metrics.ts";
import type { Target } from "../../core/target.ts";
import type { DiskProbe } from "../../paths/disk-probe.ts";
import { sharedDiskProbe } from "../../paths/shared-disk-probe.ts";
import { createRcRefresher, type RefreshBeforeCheck } from "../../rclone/rc.ts";
import type { DispatchQueue, WorkRequest } from "./dispatch-port.ts";
import type { DispatcherOptions } from "./dispatcher.ts";

/** Config → the dispatcher's options. Seconds in the config become milliseconds here. */
export interface DispatcherInput {
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
  /** The probe file checks look at the disk through (default: the process's, shared with kind resolution). */
  readonly disk?: DiskProbe;
  /** `SERVER_METRICS`: scans, file checks and target calls. */
  readonly metrics?: DispatchMetrics & TargetCallMetrics;
}

/** `RCLONE.RC_CACHE_REFRESH` → the dispatcher's `refreshMissing` for Google Drive scans, when enabled. */
export function rcRefresherFromConfig(config: Config, log: Logger): RefreshBeforeCheck | undefined {
  const rc = config.RCLONE.RC_CACHE_REFRESH;
  if (!rc.ENABLED) return undefined;
  const rcLog = log.child({ component: "RCLONE" });
  if (Object.keys(rc.FILE_EXISTS_TO_REMOTE_MAPPINGS).length === 0) {
    rcLog.warn("RCLONE.RC_CACHE_REFRESH is on but FILE_EXISTS_TO_REMOTE_MAPPINGS is empty: nothing will be refreshed.");
  }
  return createRcRefresher({ rcUrl: rc.RC_URL, remoteMappings: rc.FILE_EXISTS_TO_REMOTE_MAPPINGS, log: rcLog });
}

/** The source name the drive monitor gives its requests. */
const DRIVE_SOURCE = "Google Drive";

export function dispatcherOptionsFromConfig(input: DispatcherInput): DispatcherOptions {
  const { config, refreshMissing } = input;
  return {
    queue: input.queue,
    targets: input.targets,
    clock: input.clock,
    log: input.log,
    localForms: input.localForms,
    statPath: (input.disk ?? sharedDiskProbe(input.log)).stat,
    disk: input.disk ?? sharedDiskProbe(input.log),
    maxFileChecks: config.SERVER_MAX_FILE_CHECKS,
    fileCheckDelayMs: config.SERVER_FILE_CHECK_DELAY * 1000,
    scanFolderOnFileExistsExhaustion: config.SERVER_SCAN_FOLDER_ON_FILE_EXISTS_EXHAUSTION,
    concurrency: config.SERVER_SCAN_CONCURRENCY,
    ...(input.metrics ? { metrics: input.metrics } : {}),
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
