import { describeFirstConfig } from "../config/first-config.ts";
import { loadConfig, requireServerPass, type LoadedConfig } from "../config/load.ts";
import { effectiveLogLevel } from "../config/reload.ts";
import { resolveSettings, type Settings } from "../config/settings.ts";
import type { Config } from "../config/schema.ts";
import { databaseUrlSecrets } from "../core/database-url.ts";
import { isInContainer } from "../core/in-container.ts";
import type { Logger } from "../core/logger.ts";
import { parseNotifierUrl } from "../notify/notifier-url.ts";
import { createLogger, type LogHandle } from "../logging/create-logger.ts";
import type { CommandInput } from "./command.ts";

export interface Runtime {
  readonly settings: Settings;
  readonly loaded: LoadedConfig;
  readonly config: Config;
  readonly logs: LogHandle;
  /** The root logger; make a child per component (`log.child({ component: "PLEX" })`). */
  readonly log: Logger;
}

export interface RuntimeOptions {
  /**
   * The server logs to stdout and its log file, and needs SERVER_PASS (a ConfigError without it); other commands log
   * to stderr only and run without SERVER_PASS.
   */
  readonly server?: boolean;
}

/**
 * What every command needs first: settings (flag > env > default), the validated config, a logger that redacts the
 * secrets of that config. A missing config file is created with the few keys a user sets (first start): then `{ exitCode: 0 }`.
 * A bad config throws ConfigError, which main turns into the problem list and exit 2.
 */
export async function loadRuntime(input: CommandInput, options: RuntimeOptions = {}): Promise<Runtime | { exitCode: number }> {
  const { io } = input;
  const settings = resolveSettings(input.values, io.env, io.installDir);
  const loaded = await loadConfig(settings.configPath, io.env, true);
  if (loaded.kind === "created") {
    io.stderr.write(describeFirstConfig(loaded.path, loaded.first, { inContainer: isInContainer(), firstStart: true }));
    return { exitCode: 0 };
  }
  if (options.server) requireServerPass(loaded);
  const config = loaded.config;
  const logs = createLogger({
    // A one-shot command prints its result on stdout and says nothing on stderr unless something is wrong: its log
    // shows warnings and errors only, unless --loglevel or AUTOSCAN_LOGLEVEL asks for more.
    level: options.server || settings.origin.logLevel !== "default" ? effectiveLogLevel(settings, config) : "warn",
    format: settings.logFormat,
    stream: options.server ? "stdout" : "stderr",
    file: options.server && settings.logFile ? { path: settings.logFile, maxBytes: 2 * 1024 * 1024, maxFiles: 5 } : undefined,
    secrets: [
      config.PLEX_TOKEN,
      config.SERVER_PASS,
      config.SERVER_AUTH_PASSWORD,
      config.CLOUD.CLIENT_SECRET,
      ...Object.values(config.TARGETS).flatMap((target) => [target.TOKEN, target.PASSWORD]),
      ...Object.values(config.ARR).map((app) => app.API_KEY),
      ...Object.values(config.NOTIFY).flatMap((notifier) => parseNotifierUrl(notifier.URL).secrets),
      ...databaseUrlSecrets(config.SERVER_DATABASE_URL),
    ],
  });
  const log = logs.log.child({ component: "AUTOSCAN" });
  for (const note of loaded.notes) log.info(note);
  for (const warning of loaded.warnings) log.warn(warning);
  if (loaded.upgradable.length > 0) {
    log.warn(
      "'autoscan config upgrade' rewrites the legacy key(s) above and names each (in Docker: docker exec autoscan autoscan config upgrade; '--dry-run' shows it first).",
    );
  }
  return { settings, loaded, config, logs, log: logs.log };
}
