import { mkdir, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { generateServerPass, renderConfig } from "./defaults.ts";
import { FILE_KEYS } from "./file-variables.ts";
import type { Env } from "./settings.ts";

/**
 * The file the first start and `autoscan config init` write: only the keys a user sets, under plex_autoscan's names,
 * in the order a user fills them. Every other key keeps its default in code (docs/configuration.md lists them all), so
 * `autoscan config show` can tell what the user changed from what they never touched.
 *
 * - `PLEX_LOCAL_URL`: where Plex is. Its default (`http://localhost:32400`) is right for a Plex on the same machine
 *   outside Docker; it is written so that such a user sees where to change it.
 * - `PLEX_TOKEN`: empty, for the user to fill (doctor says how to find it).
 * - `SERVER_PASS`: a fresh random secret, the one value the server cannot start without.
 * - `SERVER_PATH_MAPPINGS`: `{}`. plex_autoscan does not require the key (its default is `{}` too), but it is the one
 *   a user nearly always fills next (the *arr containers mount media elsewhere than Plex), by hand, from the README or
 *   doctor's fix: an empty object shows the name spelled right and the place to put it, and maps nothing by mistake.
 *   plex_autoscan's Cloudbox examples (`/mnt/unionfs/…`) are not written: they are wrong for most setups.
 *
 * A key the environment already sets (`PLEX_LOCAL_URL` from Compose's `.env`, a `SERVER_PASS` variable, a `KEY_FILE`
 * secret) is left out: a value in the file would be ignored, and seeing it there misleads.
 */
export const FIRST_CONFIG_KEYS = ["PLEX_LOCAL_URL", "PLEX_TOKEN", "SERVER_PASS", "SERVER_PATH_MAPPINGS"] as const;

export type FirstConfigKey = (typeof FIRST_CONFIG_KEYS)[number];

export interface FirstConfig {
  /** What goes into the file, in that order. */
  readonly config: Readonly<Partial<Record<FirstConfigKey, unknown>>>;
  /** Keys left out because a variable sets them: the variable (`PLEX_LOCAL_URL`), and its value unless a secret. */
  readonly fromEnvironment: ReadonlyMap<FirstConfigKey, { readonly variable: string; readonly value?: string }>;
}

const BLANK: Readonly<Record<Exclude<FirstConfigKey, "SERVER_PASS">, unknown>> = {
  PLEX_LOCAL_URL: "http://localhost:32400",
  PLEX_TOKEN: "",
  SERVER_PATH_MAPPINGS: {},
};

/** Keys whose value is no secret: the first-start message shows the one a variable sets. */
const SHOWN: ReadonlySet<FirstConfigKey> = new Set(["PLEX_LOCAL_URL", "SERVER_PATH_MAPPINGS"]);

export function buildFirstConfig(serverPass: string, env: Env): FirstConfig {
  const config: Partial<Record<FirstConfigKey, unknown>> = {};
  const fromEnvironment = new Map<FirstConfigKey, { variable: string; value?: string }>();
  for (const key of FIRST_CONFIG_KEYS) {
    const variable = settingVariable(key, env);
    if (variable) fromEnvironment.set(key, { variable, ...(SHOWN.has(key) && variable === key ? { value: env[key] } : {}) });
    else config[key] = key === "SERVER_PASS" ? serverPass : BLANK[key];
  }
  return { config, fromEnvironment };
}

/** The variable that sets `key` (itself, or its `KEY_FILE`), if any; an empty variable counts as unset, as in env-override.ts. */
function settingVariable(key: string, env: Env): string | undefined {
  if (env[key] !== undefined && env[key] !== "") return key;
  const file = `${key}_FILE`;
  return FILE_KEYS.includes(key) && env[file] !== undefined && env[file]?.trim() !== "" ? file : undefined;
}

/** Writes the first config at `path` (never over an existing file), mode 0600: it holds SERVER_PASS and, once edited, the token. */
export async function writeFirstConfig(path: string, env: Env): Promise<FirstConfig> {
  const first = buildFirstConfig(generateServerPass(), env);
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, renderConfig(first.config), { mode: 0o600, flag: "wx" });
  return first;
}

/**
 * What the first start and `config init` tell the user (stderr): what the file holds, what each key is for, which keys
 * the environment sets instead, and what to run next. `inContainer`: commands are shown as `docker exec autoscan …`
 * and the environment is said to come from the compose file (or `docker run -e`).
 */
export function describeFirstConfig(path: string, first: FirstConfig, context: { readonly inContainer: boolean; readonly firstStart: boolean }): string {
  const { inContainer, firstStart } = context;
  const run = (command: string): string => `'${inContainer ? "docker exec autoscan " : ""}autoscan ${command}'`;
  const meaning: Record<FirstConfigKey, string> = {
    PLEX_LOCAL_URL: "where autoscan reaches Plex (this default is a Plex on the same machine)",
    PLEX_TOKEN: "your Plex token: set it",
    SERVER_PASS: "a fresh random secret, the secret in your webhook URLs",
    SERVER_PATH_MAPPINGS: "the paths your *arr apps send → the paths Plex uses; leave it {} when they are the same",
  };
  const width = Math.max(...FIRST_CONFIG_KEYS.map((key) => key.length));
  const written = FIRST_CONFIG_KEYS.filter((key) => key in first.config).map((key) => `  ${key.padEnd(width)}  ${meaning[key]}`);
  const outside = [...first.fromEnvironment].map(
    ([key, { variable, value }]) =>
      `  ${key.padEnd(width)}  ${value === undefined ? "set" : `set to ${value}`} by the environment variable ${variable}${inContainer ? " (the compose file and its .env, or docker run -e)" : ""}, so not in the file`,
  );
  return [
    `${firstStart ? "No config file found. Created" : "Wrote"} ${path} with only what you set yourself:`,
    ...written,
    ...outside,
    "Every other key keeps its default (docs/configuration.md lists them all; add a key to the file to change it).",
    ...(first.fromEnvironment.size > 0
      ? [`A variable wins over config.json: change it where it is set${inContainer ? " (.env), then 'docker compose up -d' ('docker restart' keeps the old value)" : ""}.`]
      : []),
    `${run("config show")} lists every value and where it comes from; ${run("doctor")} checks the setup.`,
    ...(firstStart
      ? [inContainer ? "Edit it, then start the container again ('docker restart autoscan'; the compose file's restart policy starts it again at once, Unraid's Docker page waits for Start)." : "Edit it, then start autoscan again."]
      : []),
    "",
  ].join("\n");
}
