import type { Config } from "../config/schema.ts";
import type { Clock } from "../core/clock.ts";
import type { Logger } from "../core/logger.ts";
import type { LandedMetrics } from "../core/metrics.ts";
import type { NotifySink } from "../core/notify-event.ts";
import type { Target } from "../core/target.ts";
import { startLandedChecker, type LandedChecker } from "./landed-checker.ts";
import { landedStart } from "./landed-start.ts";
import type { WorkItem } from "../queue/dispatch/dispatch-port.ts";
import type { LandedStart } from "../queue/rules/landed.ts";
import type { ScanQueue } from "../queue/scan-queue.ts";

/**
 * `SERVER_CONFIRM_LANDED`, `SERVER_LANDED_RECHECK` → the landed check: the dispatcher's decision per scan (`start`) and
 * the checker that looks the files up. Both read the config at each use, so a reload switches them at once. The
 * checker runs whether checking is on or off: looks already due when it is switched off still end.
 */
export interface LandedCheck {
  readonly start: (target: Target, item: WorkItem) => LandedStart | undefined;
  reconfigure(next: Config): void;
  stop(): Promise<void>;
}

export interface LandedCheckInput {
  readonly config: Config;
  readonly queue: ScanQueue;
  readonly targets: readonly Target[];
  readonly clock: Clock;
  readonly log: Logger;
  readonly metrics?: LandedMetrics | undefined;
  readonly notify?: NotifySink | undefined;
}

export function startLandedCheck(input: LandedCheckInput): LandedCheck {
  let config = input.config;
  const checker: LandedChecker = startLandedChecker({
    queue: input.queue,
    targets: () => input.targets,
    settings: () => ({ recheckMs: config.SERVER_LANDED_RECHECK * 1000 }),
    clock: input.clock,
    log: input.log.child({ component: "LANDED" }),
    ...(input.metrics ? { metrics: input.metrics } : {}),
    ...(input.notify ? { notify: input.notify } : {}),
  });
  return {
    start: (target, item) => landedStart(config.SERVER_CONFIRM_LANDED, target, item),
    reconfigure(next) {
      config = next;
    },
    stop: () => checker.stop(),
  };
}
