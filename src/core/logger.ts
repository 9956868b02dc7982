import type { Logger as PinoLogger } from "pino";

/**
 * The logger every module receives in its options. It is pino's: object first, message second
 * (`log.info({ folder }, "Scan requested")`), errors under `err`. Make one child per component with
 * `log.child({ component: "PLEX" })`; the classic line format prints the component in capitals.
 */
export type Logger = PinoLogger;

export type LogFormat = "classic" | "json";
export type LogLevel = "trace" | "debug" | "info" | "warn" | "error" | "fatal" | "silent";

const LEVELS: readonly LogLevel[] = ["trace", "debug", "info", "warn", "error", "fatal", "silent"];

/** `--loglevel` values plex_autoscan accepted (`WARN`, `INFO`, `DEBUG`) plus pino's names, in any case. */
export function parseLogLevel(raw: string): LogLevel | undefined {
  const level = raw.trim().toLowerCase();
  if (level === "warning") return "warn";
  if (level === "critical") return "fatal";
  return LEVELS.find((name) => name === level);
}

export function parseLogFormat(raw: string): LogFormat | undefined {
  const format = raw.trim().toLowerCase();
  return format === "classic" || format === "json" ? format : undefined;
}
