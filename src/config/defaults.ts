import { randomBytes } from "node:crypto";
import * as v from "valibot";
import { ConfigSchema, type Config } from "./schema.ts";

/** A fresh secret for the webhook URL: 32 hex characters, like plex_autoscan's uuid4().hex. */
export function generateServerPass(): string {
  return randomBytes(16).toString("hex");
}

/** Every key at its default: the value of a key that no file and no variable sets. */
export function defaultConfig(): Config {
  return v.parse(ConfigSchema, {});
}

/** Placeholder kept in config/config.example.json; first start and `config init` replace it with a random one. */
export const EXAMPLE_PASS = "change-me-to-a-long-random-secret";

/**
 * Every key a file can hold, at its default (SERVER_USE_SQLITE aside: it is only read from plex_autoscan's files, and
 * said to be ignored there): a file `autoscan config upgrade` has nothing to add to. The first start writes far less
 * (first-config.ts); docs/configuration.md documents every key.
 */
export function buildDefaultConfig(serverPass: string): Omit<Config, "SERVER_USE_SQLITE"> {
  const { SERVER_USE_SQLITE: _ignored, ...config } = v.parse(ConfigSchema, { SERVER_PASS: serverPass });
  return config;
}

/** A config file's text: 2-space JSON, newline at the end. */
export function renderConfig(config: unknown): string {
  return `${JSON.stringify(config, null, 2)}\n`;
}
