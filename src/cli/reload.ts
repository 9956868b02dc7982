import { loadConfig, requireServerPass } from "../config/load.ts";
import { diffConfig } from "../config/reload.ts";
import type { Config } from "../config/schema.ts";
import type { Settings } from "../config/settings.ts";
import { ConfigError, describeError } from "../core/errors.ts";
import type { Logger } from "../core/logger.ts";

/**
 * `kill -HUP` (also `docker kill -s HUP autoscan`, `systemctl reload autoscan`): re-reads the config file. A valid file
 * applies its live keys at once; keys that need a restart are named and keep their running value; an invalid file is
 * rejected with its problem list and the running config stays in force. Reloads run one at a time.
 */
export interface ConfigReloader {
  /** Resolves when this reload (and any before it) is done; never rejects. */
  reload(): Promise<void>;
}

export interface ConfigReloaderOptions {
  readonly settings: Pick<Settings, "configPath">;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly initial: Config;
  /** Applies a validated config (the service's `reload`). */
  readonly apply: (next: Config) => void;
  readonly log: Logger;
}

export function createConfigReloader(options: ConfigReloaderOptions): ConfigReloader {
  const { log, settings } = options;
  let inForce = options.initial;
  let chain: Promise<void> = Promise.resolve();

  async function reloadOnce(): Promise<void> {
    const path = settings.configPath;
    log.info({ configPath: path }, `Reloading the config from ${path}`);
    let next: Config;
    let warnings: readonly string[];
    try {
      const loaded = await loadConfig(path, options.env, false);
      if (loaded.kind !== "loaded") throw new ConfigError(`No config file at ${path}.`, []);
      requireServerPass(loaded);
      next = loaded.config;
      warnings = loaded.warnings;
    } catch (error) {
      if (!(error instanceof ConfigError)) {
        log.error({ err: error }, `Config reload failed: ${describeError(error)}. The running config stays in force.`);
        return;
      }
      log.error(`Config reload rejected: ${error.message.replace(/:$/, "")}; the running config stays in force.`);
      for (const problem of error.problems) log.error(`  - ${problem}`);
      return;
    }
    const changes = diffConfig(inForce, next);
    // Keys that need a restart keep their running value, so the next reload names them again until then.
    const kept = Object.fromEntries(changes.restart.map((key) => [key, (inForce as Record<string, unknown>)[key]]));
    const applied = { ...next, ...kept } as Config;
    options.apply(applied);
    inForce = applied;
    for (const warning of warnings) log.warn(warning);
    if (changes.live.length === 0 && changes.restart.length === 0) return void log.info("Config reloaded: nothing changed.");
    if (changes.live.length > 0) log.info({ applied: changes.live }, `Config reloaded: now in force: ${changes.live.join(", ")}.`);
    if (changes.restart.length > 0) {
      log.warn(
        { restart: changes.restart },
        `Config changed ${changes.restart.join(", ")}, which only take(s) effect after a restart ` +
          "(docker restart autoscan, or systemctl restart autoscan); the running value(s) stay until then.",
      );
    }
  }

  return {
    reload() {
      chain = chain.then(reloadOnce).catch((error: unknown) => log.error({ err: error }, `Config reload failed: ${describeError(error)}`));
      return chain;
    },
  };
}
