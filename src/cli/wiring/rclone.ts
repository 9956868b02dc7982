import type { Config } from "../../config/schema.ts";
import type { Logger } from "../../core/logger.ts";
import { createRcRefresher, type RefreshBeforeCheck } from "../../rclone/rc.ts";

/** `RCLONE.RC_CACHE_REFRESH` → the dispatcher's "before file check" hook for Google Drive scans, when enabled. */
export function rcRefresherFromConfig(config: Config, log: Logger): RefreshBeforeCheck | undefined {
  const rc = config.RCLONE.RC_CACHE_REFRESH;
  if (!rc.ENABLED) return undefined;
  const rcLog = log.child({ component: "RCLONE" });
  if (Object.keys(rc.FILE_EXISTS_TO_REMOTE_MAPPINGS).length === 0) {
    rcLog.warn("RCLONE.RC_CACHE_REFRESH is on but FILE_EXISTS_TO_REMOTE_MAPPINGS is empty: nothing will be refreshed.");
  }
  return createRcRefresher({ rcUrl: rc.RC_URL, remoteMappings: rc.FILE_EXISTS_TO_REMOTE_MAPPINGS, log: rcLog });
}
