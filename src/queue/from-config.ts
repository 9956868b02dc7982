import type { Config } from "../config/schema.ts";
import type { Clock } from "../core/clock.ts";
import type { Logger } from "../core/logger.ts";
import type { DiskProbe } from "../paths/disk-probe.ts";
import { createPathMapper, type PathMapper } from "../paths/mapping.ts";
import { STAT_TIMEOUT_MS, sharedDiskProbe } from "../paths/shared-disk-probe.ts";
import type { ScanQueueOptions } from "./open-scan-queue.ts";
import { createKindResolver } from "./resolve-kind.ts";
import type { RemapRequest } from "./rules/admin.ts";

/**
 * Config → the queue's options (the dispatcher's are in dispatch/from-config.ts). Seconds in the config become
 * milliseconds here. (`SERVER_USE_SQLITE: false` is reported as ignored by the config loader's notes: the queue is always durable.)
 */
export interface QueueInput {
  readonly config: Config;
  /** Settings.queueFile (`--queuefile`, `AUTOSCAN_QUEUEFILE` / `PLEX_AUTOSCAN_QUEUEFILE`, default `<data>/queue.db`). */
  readonly queueFile: string;
  readonly clock: Clock;
  readonly log: Logger;
  /** The probe kind resolution looks at the disk through (default: the process's, shared with the file checks). */
  readonly disk?: DiskProbe;
  /** The process's path mapper's `localForms` (it follows config reloads); default: a mapper made from the config. */
  readonly localForms?: (serverPath: string) => readonly string[];
  /** The process's path mapper's `toServer` (it follows config reloads), so a retry maps with today's mappings. */
  readonly toServer?: PathMapper["toServer"];
}

/**
 * A retry's mapping (`rules/admin.ts`): a received path through `SERVER_PATH_MAPPINGS` as intake maps it. A folder
 * watcher's paths are local ones, turned into the server's form through SERVER_FILE_EXIST_PATH_MAPPINGS when seen: a
 * retry leaves them as they are; so does a path no form reaches.
 */
export function remapWith(toServer: PathMapper["toServer"]): RemapRequest {
  return ({ receivedPath, source }) => {
    if (source.startsWith("Watch (")) return undefined;
    const mapped = toServer(receivedPath);
    return mapped.known ? mapped.path : undefined;
  };
}

export function scanQueueOptionsFromConfig(input: QueueInput): ScanQueueOptions {
  const { config } = input;
  // The same forms the dispatcher checks files under.
  const localForms =
    input.localForms ??
    createPathMapper({ mappings: config.SERVER_PATH_MAPPINGS, existMappings: config.SERVER_FILE_EXIST_PATH_MAPPINGS }).localForms;
  const disk = input.disk ?? sharedDiskProbe(input.log);
  return {
    file: input.queueFile,
    clock: input.clock,
    log: input.log,
    scanDelayMs: config.SERVER_SCAN_DELAY * 1000,
    priorities: config.SERVER_SCAN_PRIORITIES,
    historyMaxDays: config.SERVER_HISTORY_MAX_DAYS,
    historyMaxRows: config.SERVER_HISTORY_MAX_ROWS,
    ...(input.toServer ? { remap: remapWith(input.toServer) } : {}),
    resolveKind: createKindResolver({
      localForms,
      statPath: disk.stat,
      log: input.log,
      timeoutMs: STAT_TIMEOUT_MS,
    }),
  };
}
