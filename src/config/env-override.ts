import { maskDatabaseUrl } from "../core/database-url.ts";
import type { Env } from "./settings.ts";

/**
 * plex_autoscan's environment override: a variable named like a top-level key (`SERVER_PORT=3468`,
 * `USE_DOCKER=true`, `CLOUD={"ENABLED":true}`) is JSON-decoded and replaces that key. A value that is not JSON is
 * taken as a plain string (so `PLEX_TOKEN=abc` works); the schema then says if that type is wrong, naming the variable.
 */
export interface EnvOverride {
  readonly raw: Record<string, unknown>;
  /** key → "environment variable KEY", for error messages. */
  readonly origins: Map<string, string>;
  /** `Using ENV setting KEY=…` lines, secrets masked. */
  readonly notes: string[];
}

const SECRET_KEYS = new Set(["PLEX_TOKEN", "SERVER_PASS", "SERVER_AUTH_PASSWORD", "CLOUD", "GOOGLE", "TARGETS", "ARR", "NOTIFY"]);

export function applyEnvOverrides(
  input: Record<string, unknown>,
  env: Env,
  topKeys: readonly string[],
  stringKeys: ReadonlySet<string> = new Set(),
): EnvOverride {
  const raw = { ...input };
  const origins = new Map<string, string>();
  const notes: string[] = [];
  for (const key of [...topKeys, "GOOGLE"]) {
    const text = env[key];
    // Empty counts as unset, so `KEY: "${KEY:-}"` in a compose file does not blank the config's value.
    if (text === undefined || text === "") continue;
    raw[key] = stringKeys.has(key) && !text.trimStart().startsWith('"') ? text : decode(text);
    origins.set(key, `environment variable ${key}`);
    notes.push(`Using ENV setting ${key}=${shownValue(key, text)}`);
  }
  return { raw, origins, notes };
}

/** A secret as `<redacted>`; the database URL with its password as `***` (its host and database help). */
function shownValue(key: string, text: string): string {
  if (key === "SERVER_DATABASE_URL") return maskDatabaseUrl(text);
  return SECRET_KEYS.has(key) ? "<redacted>" : text;
}

function decode(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
