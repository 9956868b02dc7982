import type { Logger } from "../core/logger.ts";
import { createDiskProbe, type DiskProbe } from "./disk-probe.ts";

/** How long one look at a media disk may take before it counts as "not there yet". */
export const STAT_TIMEOUT_MS = 5_000;

let processProbe: DiskProbe | undefined;

/**
 * The one `DiskProbe` of the process: the file checks, kind resolution and the watchers share its one look per mount
 * (and its helper per mount), so a hung mount costs one thread however many of them look. Made on first use, with
 * that caller's logger.
 */
export function sharedDiskProbe(log: Logger): DiskProbe {
  processProbe ??= createDiskProbe({ log, timeoutMs: STAT_TIMEOUT_MS });
  return processProbe;
}
