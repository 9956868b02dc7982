import { copyFile, readFile } from "node:fs/promises";
import * as v from "valibot";
import { writeFileDurably } from "../core/durable-file.ts";
import { parseJsonText } from "./json-text.ts";
import { migrateLegacyKeys } from "./legacy.ts";
import { generateServerPass, renderConfig } from "./defaults.ts";
import { ConfigSchema } from "./schema.ts";

export interface UpgradeResult {
  /** `KEY: value` for each key added with its default. */
  readonly added: readonly string[];
  /** `OLD → NEW` for each legacy key renamed (its value kept). */
  readonly renamed: readonly string[];
  /** Obsolete keys that were dropped, with why (`Config key "X" is obsolete …`). */
  readonly removed: readonly string[];
  /** The backup written before the file was changed, if it was changed. */
  readonly backup: string | undefined;
}

type Raw = Record<string, unknown>;
const OPT_IN: ReadonlySet<string> = new Set([
  "TARGETS",
  "SERVER_ANCHORS",
  "ARR",
  "SERVER_BACKFILL_INTERVAL",
  "NOTIFY",
  "WATCH",
  // Several instances on PostgreSQL: a file that works runs one instance on the embedded queue, and stays so.
  "SERVER_DATABASE_URL",
  "SERVER_LEASE_SECONDS",
]);
const isObject = (value: unknown): value is Raw => typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * Adds the keys that are new since the file was written (with their defaults) and renames legacy keys to their new
 * names. Every value of the user's is kept (a renamed section moves to the end); obsolete keys are dropped and named;
 * a missing SERVER_PASS gets a random one; a backup `config.json.bak` is kept beside it.
 */
export async function upgradeConfigFile(path: string): Promise<UpgradeResult> {
  const parsed = parseJsonText(await readFile(path, "utf8"), path);
  if (!isObject(parsed)) return { added: [], renamed: [], removed: [], backup: undefined };
  const legacy = migrateLegacyKeys(parsed);
  const defaults = v.parse(ConfigSchema, { SERVER_PASS: "placeholder" }) as Raw;
  const added: string[] = [];
  const upgraded = mergeMissing(legacy.raw, defaults, "", added);
  if (typeof upgraded.SERVER_PASS !== "string" || upgraded.SERVER_PASS === "") {
    upgraded.SERVER_PASS = generateServerPass();
    added.push("SERVER_PASS: <a new random secret; update your *arr webhook URLs>");
  }
  const removed = legacy.warnings.filter((warning) => legacy.removed.some((key) => warning.includes(`"${key}"`)));
  if (added.length === 0 && legacy.renamed.length === 0 && removed.length === 0) {
    return { added, renamed: [], removed: [], backup: undefined };
  }
  const backup = `${path}.bak`;
  await copyFile(path, backup);
  await writeFileDurably(path, renderConfig(upgraded));
  return { added, renamed: legacy.renamed, removed, backup };
}

function mergeMissing(target: Raw, defaults: Raw, prefix: string, added: string[]): Raw {
  const out: Raw = { ...target };
  for (const [key, fallback] of Object.entries(defaults)) {
    // SERVER_USE_SQLITE is only read from old files (and ignored): it is never added. TARGETS and SERVER_ANCHORS are
    // features one opts into (README): a file that works is left as it is.
    if (key === "SERVER_PASS" || key === "SERVER_USE_SQLITE" || OPT_IN.has(`${prefix}${key}`)) continue;
    const current = out[key];
    if (current === undefined) {
      out[key] = fallback;
      added.push(`${prefix}${key}: ${JSON.stringify(fallback)}`);
    } else if (isObject(current) && isObject(fallback) && Object.keys(fallback).length > 0) {
      out[key] = mergeMissing(current, fallback, `${prefix}${key}.`, added);
    }
  }
  return out;
}
