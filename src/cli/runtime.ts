import { loadConfig, requireServerPass, type LoadedConfig } from "../config/load.ts";
import { effectiveLogLevel } from "../config/reload.ts";
import { resolveSettings, type Settings } from "../config/settings.ts";
import type { Config } from "../config/schema.ts";
import { databaseUrlSecrets } from "../core/database-url.ts";
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
 * secrets of that config. A missing config file is created with defaults (first start): then `{ exitCode: 0 }`.
 * A bad config throws ConfigError, which main turns into the problem list and exit 2.
 */
export async function loadRuntime(input: CommandInput, options: RuntimeOptions = {}): Promise<Runtime | { exitCode: number }> {
  const { io } = input;
  const settings = resolveSettings(input.values, io.env, io.installDir);
  const loaded = await loadConfig(settings.configPath, io.env, true);
  if (loaded.kind === "created") {
    io.stderr.write(
      [
        `No config file found. Created a default config at: ${loaded.path}`,
        "It has a fresh random SERVER_PASS (the secret in your webhook URLs).",
        "Edit it now: set PLEX_LOCAL_URL and PLEX_TOKEN, and SERVER_PATH_MAPPINGS for the paths your *arr apps send.",
        "An environment variable named like a key wins over the file: with the compose file, PLEX_LOCAL_URL comes from",
        ".env (docker-compose.yml sets it); change it there and apply it with 'docker compose up -d' ('docker restart'",
        "keeps the old value). 'autoscan config show' lists every value and where it comes from.",
        "Then check it with 'autoscan doctor' and start autoscan again.",
        "",
      ].join("\n"),
    );
    return { exitCode: 0 };
  }
  if (options.server) requireServerPass(loaded);
  const config = loaded.config;
  const logs = createLogger({
    level: effectiveLogLevel(settings, config),
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
  return { settings, loaded, config, logs, log: logs.log };
}
