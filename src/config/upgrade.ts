import { copyFile, readFile } from "node:fs/promises";
import * as v from "valibot";
import { writeFileDurably } from "../core/durable-file.ts";
import { ConfigError } from "../core/errors.ts";
import { generateServerPass, renderConfig } from "./defaults.ts";
import { FILE_KEYS } from "./file-variables.ts";
import { parseJsonText } from "./json-text.ts";
import { migrateLegacyKeys, type DroppedKey } from "./legacy.ts";
import { parseConfigText } from "./load.ts";
import { NEW_SECTIONS, type NewSection } from "./new-sections.ts";
import { ConfigSchema } from "./schema.ts";
import type { Env } from "./settings.ts";

export interface UpgradeOptions {
  /** Say what would change; write nothing. */
  readonly dryRun?: boolean;
  /** The environment autoscan runs with: a key a variable sets is not written to the file (it would be ignored). */
  readonly env?: Env;
}

export interface UpgradeResult {
  /** `OLD → NEW` for each legacy key renamed or moved (its value kept). */
  readonly renamed: readonly string[];
  /** Each key taken out of the file, with why (obsolete in autoscan, or replaced by a key that is also set). */
  readonly dropped: readonly DroppedKey[];
  /** Values changed to one autoscan supports, with why. */
  readonly changed: readonly string[];
  /** `KEY: what` for each key written that the file did not have (only a missing SERVER_PASS). */
  readonly added: readonly string[];
  /** Keys of autoscan the file leaves out that keep their defaults (not written: the defaults live in the code). */
  readonly defaulted: readonly string[];
  /** The features a file switches on with a section of its own that this file has not (never written). */
  readonly newSections: readonly NewSection[];
  /**
   * What is still wrong with the file once upgraded, as the server would say it (an unknown key, a wrong type): an
   * upgrade keeps what it does not know, so these need an edit by hand. Empty: the file loads.
   */
  readonly problems: readonly string[];
  /** Whether the file was rewritten (false when nothing changes, and with `dryRun`). */
  readonly written: boolean;
  /** The backup written before the file was changed, if it was changed. */
  readonly backup: string | undefined;
}

type Raw = Record<string, unknown>;

/**
 * Keys plex_autoscan's files hold that the schema still reads and ignores (config/features.ts says so at start): the
 * upgrade takes them out.
 */
const IGNORED: Readonly<Record<string, string>> = {
  SERVER_USE_SQLITE: "obsolete in autoscan (the queue is always durable now)",
};

const isObject = (value: unknown): value is Raw => typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * Brings a config file up to date with autoscan: renames legacy keys to their new names (values kept), drops the
 * obsolete ones, adds a SERVER_PASS when the file has none (and no variable sets it), and keeps a backup
 * `config.json.bak` of the file as it was. Every other value of the user's is kept, in order (a renamed section moves
 * to the end).
 *
 * Keys the file leaves out are not written: they keep their defaults, which live in the code (docs/configuration.md
 * lists them), like the short file the first start writes. They are listed in `defaulted`, and the features that
 * need a section of their own (ARR, TARGETS, NOTIFY, WATCH …) in `newSections`, for the command to name.
 */
export async function upgradeConfigFile(path: string, options: UpgradeOptions = {}): Promise<UpgradeResult> {
  const parsed = parseJsonText(await readConfigFile(path), path);
  if (!isObject(parsed)) {
    return { renamed: [], dropped: [], changed: [], added: [], defaulted: [], newSections: [], problems: [], written: false, backup: undefined };
  }
  const env = options.env ?? {};
  const setByEnvironment = (key: string): boolean => !!env[key] || (FILE_KEYS.includes(key) && !!env[`${key}_FILE`]);
  const legacy = migrateLegacyKeys(parsed);
  const upgraded = legacy.raw;
  const dropped = [...legacy.dropped];
  for (const [key, why] of Object.entries(IGNORED)) {
    if (!(key in upgraded)) continue;
    delete upgraded[key];
    dropped.push({ key, why });
  }
  const added: string[] = [];
  if ((typeof upgraded.SERVER_PASS !== "string" || upgraded.SERVER_PASS === "") && !setByEnvironment("SERVER_PASS")) {
    upgraded.SERVER_PASS = generateServerPass();
    added.push("SERVER_PASS: a new random secret (the webhook URLs change: 'autoscan webhook-url' prints them)");
  }
  const present = (key: string): boolean => key in upgraded || setByEnvironment(key);
  const newSections = NEW_SECTIONS.filter((section) => !present(section.key));
  const sectionKeys = new Set(NEW_SECTIONS.map((section) => section.key));
  const defaulted = missingKeys(upgraded, DEFAULTS, "").filter((key) => !sectionKeys.has(key) && !present(key) && !(key in IGNORED));
  const problems = remainingProblems(upgraded, path, env);
  const found = { renamed: legacy.renamed, dropped, changed: legacy.changed, added, defaulted, newSections, problems };
  if (legacy.renamed.length + dropped.length + legacy.changed.length + added.length === 0 || options.dryRun) {
    return { ...found, written: false, backup: undefined };
  }
  const backup = `${path}.bak`;
  await copyFile(path, backup);
  await writeFileDurably(path, renderConfig(upgraded));
  return { ...found, written: true, backup };
}

/** The upgraded file read as the server reads it (with the same environment); its problems, if any. */
function remainingProblems(upgraded: Raw, path: string, env: Env): string[] {
  try {
    parseConfigText(renderConfig(upgraded), path, env);
    return [];
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return error.problems.length > 0 ? [...error.problems] : [error.message];
  }
}

/** Every key with its default (SERVER_PASS has none: a placeholder stands in). */
const DEFAULTS = v.parse(ConfigSchema, { SERVER_PASS: "placeholder" }) as Raw;

/**
 * The keys (`PLEX_TIMEOUT`, `CLOUD.SERVICE_ACCOUNT_FILE`) of `defaults` that `raw` leaves out, looking inside the
 * sections the file has (a section's own map of names, like SERVER_PATH_MAPPINGS, holds no keys of ours: it has no
 * default entries to look for).
 */
function missingKeys(raw: Raw, defaults: Raw, prefix: string): string[] {
  return Object.entries(defaults).flatMap(([key, fallback]) => {
    const current = raw[key];
    if (current === undefined) return [`${prefix}${key}`];
    return isObject(current) && isObject(fallback) ? missingKeys(current, fallback, `${prefix}${key}.`) : [];
  });
}

/** The file's text; no file is a clear stop (nothing to upgrade), not a bare ENOENT. */
async function readConfigFile(path: string): Promise<string> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    throw new ConfigError(`No config file at ${path}: nothing to upgrade.`, [
      `Copy your plex_autoscan config.json there (or name it with --config PATH), or write a new one with: autoscan config init --config ${path}`,
    ]);
  }
}
