import { parseLogLevel, type LogLevel } from "../core/logger.ts";
import type { Config } from "./schema.ts";
import type { Settings } from "./settings.ts";

/**
 * What a config reload (SIGHUP) can change in the running server. The keys below apply at once, for the next request,
 * file check or scan round; any other changed key is named as needing a restart (the listening address and port,
 * Plex and its scanner, Google Drive, metrics …), and keeps its old value until then. Paths of the data directory
 * come from flags and the environment, not the file, so a reload never moves them.
 */
export const LIVE_KEYS: ReadonlySet<string> = new Set([
  "SERVER_PATH_MAPPINGS",
  "SERVER_FILE_EXIST_PATH_MAPPINGS",
  "SERVER_SCAN_DELAY",
  "SERVER_SCAN_PRIORITIES",
  "SERVER_MAX_FILE_CHECKS",
  "SERVER_FILE_CHECK_DELAY",
  "SERVER_SCAN_FOLDER_ON_FILE_EXISTS_EXHAUSTION",
  "SERVER_IGNORE_LIST",
  "SERVER_ALLOW_MANUAL_SCAN",
  "SERVER_PASS",
  "SERVER_AUTH_USERNAME",
  "SERVER_AUTH_PASSWORD",
  "SERVER_MAX_REQUEST_BYTES",
  "SERVER_HISTORY_MAX_DAYS",
  "SERVER_HISTORY_MAX_ROWS",
  "RUN_COMMAND_BEFORE_SCAN",
  "RUN_COMMAND_AFTER_SCAN",
  "SERVER_COMMAND_TIMEOUT",
  "SERVER_LOG_LEVEL",
  "SERVER_ANCHORS",
  "SERVER_CONFIRM_LANDED",
  "SERVER_LANDED_RECHECK",
]);

export interface ConfigChanges {
  /** Changed keys that apply now. */
  readonly live: readonly string[];
  /** Changed keys that apply at the next start. */
  readonly restart: readonly string[];
}

/** The top-level keys whose value differs (values compared as JSON: the config is plain data). */
export function diffConfig(before: Config, after: Config): ConfigChanges {
  const live: string[] = [];
  const restart: string[] = [];
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
  for (const key of keys) {
    const a = JSON.stringify((before as Record<string, unknown>)[key]);
    const b = JSON.stringify((after as Record<string, unknown>)[key]);
    if (a === b) continue;
    (LIVE_KEYS.has(key) ? live : restart).push(key);
  }
  return { live, restart };
}

/**
 * The log level in force: `--loglevel` or `AUTOSCAN_LOGLEVEL` when given (they win, as for every setting), else the
 * config's `SERVER_LOG_LEVEL`, else INFO.
 */
export function effectiveLogLevel(settings: Pick<Settings, "logLevel" | "origin">, config: Pick<Config, "SERVER_LOG_LEVEL">): LogLevel {
  if (settings.origin.logLevel !== "default" || config.SERVER_LOG_LEVEL === "") return settings.logLevel;
  return parseLogLevel(config.SERVER_LOG_LEVEL) ?? settings.logLevel;
}
