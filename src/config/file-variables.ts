import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { ConfigError } from "../core/errors.ts";
import type { Env } from "./settings.ts";

/**
 * `KEY_FILE` variables, the Docker secrets convention (`POSTGRES_PASSWORD_FILE` of the postgres image): the variable
 * names a file whose content, trimmed, is the value of the top-level key `KEY`. It wins over config.json. Setting both
 * `KEY` and `KEY_FILE` is an error, as in the postgres image: which one was meant cannot be guessed, and the one that
 * lost would go unnoticed. An empty variable counts as unset (as for the environment overrides).
 */
export const FILE_KEYS: readonly string[] = ["SERVER_DATABASE_URL"];

export interface FileValue {
  readonly key: string;
  /** `SERVER_DATABASE_URL_FILE` */
  readonly variable: string;
  /** The file, as an absolute path. */
  readonly path: string;
  readonly value: string;
}

export async function readFileVariables(env: Env): Promise<FileValue[]> {
  const out: FileValue[] = [];
  for (const key of FILE_KEYS) {
    const variable = `${key}_FILE`;
    const named = env[variable];
    if (named === undefined || named.trim() === "") continue;
    if (env[key] !== undefined && env[key] !== "") {
      throw new ConfigError(`Both ${key} and ${variable} are set in the environment.`, [
        `${key} holds the value itself, ${variable} names a file that holds it (a Docker secret): set only one of them.`,
      ]);
    }
    const path = resolve(named.trim());
    out.push({ key, variable, path, value: await readValue(variable, path) });
  }
  return out;
}

async function readValue(variable: string, path: string): Promise<string> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const reason =
      code === "ENOENT"
        ? "it does not exist"
        : code === "EACCES" || code === "EPERM"
          ? `autoscan's user${process.getuid ? ` (uid ${process.getuid()})` : ""} may not read it`
          : code === "EISDIR"
            ? "it is a folder, not a file"
            : `it cannot be read (${code ?? (error as Error).message})`;
    throw new ConfigError(`${variable} names ${path}, but ${reason}.`, [
      `Point ${variable} at a readable file that holds the value (in Docker: a secret, mounted at /run/secrets/<name>).`,
    ], { cause: error });
  }
  const value = text.trim();
  if (value === "") {
    throw new ConfigError(`${variable} names ${path}, but that file is empty.`, [`Write the value into ${path}, or unset ${variable}.`]);
  }
  return value;
}
