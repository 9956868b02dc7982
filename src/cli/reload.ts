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
  // The file as last read: a key that needs a restart is announced when its value in the file changes, not again at
  // every later reload while it waits for the restart (those only name it, once, in the reload's summary).
  let lastRead = options.initial;
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
    // Keys that need a restart keep their running value until then.
    const kept = Object.fromEntries(changes.restart.map((key) => [key, (inForce as Record<string, unknown>)[key]]));
    const applied = { ...next, ...kept } as Config;
    const editedSince = new Set(diffConfig(lastRead, next).restart);
    const fresh = changes.restart.filter((key) => editedSince.has(key));
    const waiting = changes.restart.filter((key) => !editedSince.has(key));
    options.apply(applied);
    inForce = applied;
    lastRead = next;
    // Each line once per reload, however many parts of the config say it.
    for (const warning of new Set(warnings)) log.warn(warning);
    const stillWaiting = waiting.length > 0 ? ` Still waiting for a restart: ${waiting.join(", ")}.` : "";
    if (changes.live.length === 0 && fresh.length === 0) return void log.info(`Config reloaded: nothing changed.${stillWaiting}`);
    if (changes.live.length > 0) log.info({ applied: changes.live }, `Config reloaded: now in force: ${changes.live.join(", ")}.${fresh.length > 0 ? "" : stillWaiting}`);
    if (fresh.length > 0) {
      log.warn(
        { restart: fresh, ...(waiting.length > 0 ? { waiting } : {}) },
        `Config changed ${fresh.join(", ")}, which only take(s) effect after a restart ` +
          `(docker restart autoscan, or systemctl restart autoscan); the running value(s) stay until then.${stillWaiting}`,
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
