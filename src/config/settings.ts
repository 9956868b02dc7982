import { dirname, isAbsolute, join, resolve } from "node:path";
import { UsageError } from "../core/errors.ts";
import { parseLogFormat, parseLogLevel, type LogFormat, type LogLevel } from "../core/logger.ts";

/**
 * Where things live, resolved once per process with plex_autoscan's precedence: flag > environment > default.
 * plex_autoscan's flags (`--config --logfile --queuefile --cachefile --loglevel`) and `PLEX_AUTOSCAN_*` variables
 * keep working; `AUTOSCAN_*` variables are ours and win over the `PLEX_AUTOSCAN_*` ones.
 * Data files go to the data directory (default: the config file's folder), never to the working directory.
 */
export interface Settings {
  readonly configPath: string;
  readonly dataDir: string;
  /** The rotating log file of the server; undefined when switched off (`--logfile none`). */
  readonly logFile: string | undefined;
  readonly queueFile: string;
  readonly cacheFile: string;
  readonly logLevel: LogLevel;
  readonly logFormat: LogFormat;
  /** `DOCKER_HOST`, for the exec scanner; undefined means the default socket. */
  readonly dockerHost: string | undefined;
  /** Tests only (`AUTOSCAN_TEST_PAUSE_IMPORT_AT`): plex_autoscan's import waits for ever at this step, to be killed. */
  readonly pauseImportAt: string | undefined;
  /** Which source gave each setting, for `config check` and the start-up lines. */
  readonly origin: Readonly<Record<string, "flag" | "env" | "default">>;
}

export type Env = Readonly<Record<string, string | undefined>>;
type Flags = Readonly<Record<string, unknown>>;

const NONE = new Set(["", "none", "off", "false", "-"]);

export function resolveSettings(flags: Flags, env: Env, installDir: string): Settings {
  const origin: Record<string, "flag" | "env" | "default"> = {};
  const pick = (name: string, flag: string, vars: readonly string[], fallback: () => string): string => {
    const fromFlag = flags[flag];
    if (typeof fromFlag === "string") return (origin[name] = "flag"), expandVars(fromFlag, env);
    const fromEnv = vars.map((key) => env[key]).find((value) => value !== undefined && value !== "");
    if (fromEnv !== undefined) return (origin[name] = "env"), expandVars(fromEnv, env);
    origin[name] = "default";
    return fallback();
  };
  const configPath = resolve(
    pick("config", "config", ["AUTOSCAN_CONFIG", "PLEX_AUTOSCAN_CONFIG"], () => join(installDir, "config", "config.json")),
  );
  const dataDir = resolve(pick("dataDir", "data-dir", ["AUTOSCAN_DATA_DIR"], () => dirname(configPath)));
  const inData = (file: string): string => (isAbsolute(file) ? file : join(dataDir, file));
  const logFile = pick("logFile", "logfile", ["AUTOSCAN_LOGFILE", "PLEX_AUTOSCAN_LOGFILE"], () => "autoscan.log");
  const rawLevel = pick("logLevel", "loglevel", ["AUTOSCAN_LOGLEVEL", "PLEX_AUTOSCAN_LOGLEVEL"], () => "info");
  const rawFormat = pick("logFormat", "log-format", ["AUTOSCAN_LOG_FORMAT"], () => "classic");
  const logLevel = parseLogLevel(rawLevel);
  if (!logLevel) throw new UsageError(`Unknown log level "${rawLevel}": use DEBUG, INFO, WARNING or ERROR.`);
  const logFormat = parseLogFormat(rawFormat);
  if (!logFormat) throw new UsageError(`Unknown log format "${rawFormat}": use "classic" or "json".`);
  return {
    configPath,
    dataDir,
    logFile: NONE.has(logFile.trim().toLowerCase()) ? undefined : inData(logFile),
    queueFile: inData(pick("queueFile", "queuefile", ["AUTOSCAN_QUEUEFILE", "PLEX_AUTOSCAN_QUEUEFILE"], () => "queue.db")),
    cacheFile: inData(pick("cacheFile", "cachefile", ["AUTOSCAN_CACHEFILE", "PLEX_AUTOSCAN_CACHEFILE"], () => "cache.db")),
    logLevel,
    logFormat,
    dockerHost: env.DOCKER_HOST || undefined,
    pauseImportAt: env.AUTOSCAN_TEST_PAUSE_IMPORT_AT || undefined,
    origin,
  };
}

/** `$VAR` and `${VAR}` expansion, as Python's os.path.expandvars did for these settings; unknown names stay. */
export function expandVars(value: string, env: Env): string {
  return value.replace(/\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))/g, (whole, braced, bare) => {
    const found = env[(braced ?? bare) as string];
    return found === undefined ? whole : found;
  });
}
