import { readFile } from "node:fs/promises";
import * as v from "valibot";
import { ConfigError } from "../core/errors.ts";
import { EXAMPLE_PASS } from "./defaults.ts";
import { applyEnvOverrides } from "./env-override.ts";
import { readFileVariables, type FileValue } from "./file-variables.ts";
import { writeFirstConfig, type FirstConfig } from "./first-config.ts";
import { parseJsonText } from "./json-text.ts";
import { migrateLegacyKeys } from "./legacy.ts";
import { describeIssues, knownKeysAt } from "./problems.ts";
import { configSources, type ConfigSource } from "./provenance.ts";
import { ConfigSchema, type Config } from "./schema.ts";
import type { Env } from "./settings.ts";

export interface LoadedConfig {
  readonly kind: "loaded";
  readonly path: string;
  readonly config: Config;
  /** Problems the user should fix that do not stop the service (legacy keys, weak secret …). */
  readonly warnings: readonly string[];
  /** The warnings about legacy keys: `autoscan config upgrade` clears each (it renames, moves or drops the key). */
  readonly upgradable: readonly string[];
  /** Informational lines (`Using ENV setting …`). */
  readonly notes: readonly string[];
  /** Top-level keys the user set (in the file or the environment), so presets fill only the others. */
  readonly explicitKeys: ReadonlySet<string>;
  /** Where each top-level key's value comes from (provenance.ts). */
  readonly sources: ReadonlyMap<string, ConfigSource>;
}

export interface CreatedConfig {
  readonly kind: "created";
  readonly path: string;
  /** What was written, and which keys were left to the environment (first-config.ts). */
  readonly first: FirstConfig;
}

/**
 * Reads `config.json`, migrates legacy keys, applies environment overrides, validates strictly and fills defaults.
 * All problems are reported at once in a `ConfigError`. A missing file is created with the few keys a user sets and a
 * fresh `SERVER_PASS` (first-config.ts) when `createIfMissing` is set (first start), which the caller reports and exits 0 on.
 */
export async function loadConfig(path: string, env: Env, createIfMissing: boolean): Promise<LoadedConfig | CreatedConfig> {
  const text = await readConfigText(path);
  if (text === undefined) {
    if (!createIfMissing) throw new ConfigError(`No config file at ${path}.`, [`Create one with: autoscan config init --config ${path}`]);
    return { kind: "created", path, first: await writeFirstConfig(path, env) };
  }
  return parseConfigText(text, path, env, await readFileVariables(env));
}

/** `files`: values read from `KEY_FILE` variables (file-variables.ts); they win over the file, like the environment. */
export function parseConfigText(text: string, path: string, env: Env, files: readonly FileValue[] = []): LoadedConfig {
  const parsed = parseJsonText(text, path);
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new ConfigError(`${path} must hold a JSON object ({ … }).`, [`${path}: expected an object at the top level.`]);
  }
  // Environment first, so a `GOOGLE` variable is migrated like a `GOOGLE` section in the file.
  const overridden = applyEnvOverrides(parsed as Record<string, unknown>, env, knownKeysAt([]), STRING_KEYS);
  for (const file of files) {
    overridden.raw[file.key] = file.value;
    overridden.origins.set(file.key, `the file ${file.path}, named by ${file.variable}`);
    overridden.notes.push(`Using ${file.key} from ${file.path} (${file.variable})`);
  }
  const legacy = migrateLegacyKeys(overridden.raw);
  const result = v.safeParse(ConfigSchema, legacy.raw);
  if (!result.success) {
    const problems = describeIssues(result.issues, { origins: overridden.origins, raw: legacy.raw, aliases: legacy.aliases });
    const count = problems.length === 1 ? "1 problem" : `${problems.length} problems`;
    throw new ConfigError(`${path} has ${count}:`, problems);
  }
  const fileKeys = Object.keys(parsed);
  const renamedTo = new Map(legacy.renamed.map((rename) => rename.split(" → ") as [string, string]).map(([from, to]) => [to, from]));
  const sources = configSources({
    keys: Object.keys(result.output),
    path,
    fileValues: parsed as Record<string, unknown>,
    inFile: new Map(
      Object.keys(legacy.raw)
        .map((key): [string, string] => [key, fileKeys.includes(key) ? key : (renamedTo.get(key) ?? legacy.aliases.get(key) ?? key)])
        .filter(([, written]) => fileKeys.includes(written)),
    ),
    // A variable under an old name (GOOGLE) sets the key under its new one (CLOUD).
    environment: new Set(
      [...overridden.origins.keys()]
        .filter((key) => overridden.origins.get(key)?.startsWith("environment variable"))
        .map((key) => [...renamedTo].find(([, from]) => from === key)?.[0] ?? key),
    ),
    fileVariables: new Map(files.map((file) => [file.key, { variable: file.variable, file: file.path }])),
  });
  return {
    kind: "loaded",
    path,
    sources,
    config: result.output,
    warnings: [...legacy.warnings, ...weakSecretWarnings(result.output)],
    upgradable: legacy.warnings,
    notes: [...legacy.notes, ...overridden.notes],
    explicitKeys: new Set(Object.keys(legacy.raw)),
  };
}

/** Top-level keys whose value is text: an environment value like `SERVER_PASS=2025` stays text, not a number. */
const STRING_KEYS: ReadonlySet<string> = new Set(
  Object.entries(v.parse(ConfigSchema, { SERVER_PASS: "placeholder" }))
    .filter(([, value]) => typeof value === "string")
    .map(([key]) => key),
);

async function readConfigText(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    const reason = (error as NodeJS.ErrnoException).code === "EACCES" ? "permission denied" : String(error);
    throw new ConfigError(`Cannot read ${path}: ${reason}.`, [`Check that the file is readable by the autoscan user.`], { cause: error });
  }
}

/**
 * The server's own requirement: SERVER_PASS is the secret of every webhook URL, so the server does not start without
 * one, nor with one short enough to guess (`serverPassProblem`). Other commands (scan, sections, authorize, config
 * check …) never serve, and load a config without it.
 */
export function requireServerPass(loaded: Pick<LoadedConfig, "path" | "config">): void {
  const problem = serverPassProblem(loaded.config.SERVER_PASS);
  if (problem === undefined) return;
  throw new ConfigError(`${loaded.path} has 1 problem:`, [problem]);
}

/**
 * Shorter than this, SERVER_PASS is refused by the server. Wrong guesses are slowed (web/guess-brake.ts), but a
 * secret of a few characters is still a matter of days; 8 random ones take millennia at the braked pace.
 */
export const SERVER_PASS_MIN_LENGTH = 8;
/** Shorter than this, a warning: 32 random characters is what `config init` and the first start write. */
const SERVER_PASS_GOOD_LENGTH = 16;

const MAKE_A_GOOD_ONE =
  "'openssl rand -hex 16' prints a good one (or remove the key and run 'autoscan config upgrade', which writes one); " +
  "then give the *arr apps their new webhook URL ('autoscan webhook-url' prints it)";

/** Said by the server (which stops) and by `config check` (a warning: the other commands work without it). */
export const SERVER_PASS_MISSING =
  "SERVER_PASS: this key is required to run the server (it is the secret in every webhook URL) and it is missing or empty. " +
  "Run 'autoscan config upgrade' to add a random one.";

/** Why the server cannot run with this SERVER_PASS (missing, or too short to be a secret), or undefined. */
export function serverPassProblem(pass: string): string | undefined {
  if (pass === "") return SERVER_PASS_MISSING;
  if (pass.length >= SERVER_PASS_MIN_LENGTH) return undefined;
  return (
    `SERVER_PASS is ${String(pass.length)} characters: the server needs at least ${String(SERVER_PASS_MIN_LENGTH)} ` +
    `(anyone who guesses it can queue scans and change the queue). ${MAKE_A_GOOD_ONE}.`
  );
}

function weakSecretWarnings(config: Config): string[] {
  const pass = config.SERVER_PASS;
  if (pass === "") return [];
  if (pass === EXAMPLE_PASS) {
    return [`SERVER_PASS is still the example's placeholder: set it to a random secret: ${MAKE_A_GOOD_ONE}.`];
  }
  const refused = serverPassProblem(pass);
  if (refused) return [`${refused} The server refuses to start until then.`];
  if (pass.length >= SERVER_PASS_GOOD_LENGTH) return [];
  return [`SERVER_PASS is short: use 32 random characters: ${MAKE_A_GOOD_ONE}.`];
}
