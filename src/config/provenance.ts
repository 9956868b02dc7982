/**
 * Where each top-level config value comes from, in the order that wins: a `KEY_FILE` variable (a secret file), an
 * environment variable, config.json (under its own name or an old plex_autoscan name), else the default (a key in no
 * file). `autoscan config show` prints it; doctor says it beside any value it blames.
 *
 * Inside a container the environment comes from the compose file (and its `.env`) or `docker run -e`; the process
 * cannot tell which, so the label stays "environment" and the sentence names both.
 */
export type ConfigSource =
  | { readonly kind: "file-variable"; readonly variable: string; readonly file: string; readonly overrides?: OverriddenValue }
  | { readonly kind: "environment"; readonly variable: string; readonly overrides?: OverriddenValue }
  | { readonly kind: "config.json"; readonly path: string; readonly as?: string }
  | { readonly kind: "default" };

/** A value config.json also holds for a key a variable sets: it has no effect while the variable is set. */
export interface OverriddenValue {
  /** As written in the file (not validated: it is never used). */
  readonly value: unknown;
  /** The name it is written under, when an old plex_autoscan name. */
  readonly as?: string;
}

/** The config keys docker-compose.yml sets from `.env` (or the shell): they win over config.json. */
export const COMPOSE_ENV_KEYS: readonly string[] = ["PLEX_LOCAL_URL"];

/**
 * The config keys the image itself sets (the Dockerfile's ENV): in a container autoscan listens where
 * docker-compose.yml publishes, whatever config.json says; the host's side is AUTOSCAN_PORT in `.env`.
 */
export const IMAGE_ENV_KEYS: readonly string[] = ["SERVER_IP", "SERVER_PORT"];

export interface SourceInput {
  /** Top-level keys of the final config. */
  readonly keys: readonly string[];
  readonly path: string;
  /** Keys present in config.json, by the name the final config uses → the name written in the file. */
  readonly inFile: ReadonlyMap<string, string>;
  /** config.json as parsed (before any variable replaced a key), to show a value a variable overrides. */
  readonly fileValues: Readonly<Record<string, unknown>>;
  readonly environment: ReadonlySet<string>;
  /** Key → the `KEY_FILE` variable and the file it named. */
  readonly fileVariables: ReadonlyMap<string, { readonly variable: string; readonly file: string }>;
}

export function configSources(input: SourceInput): ReadonlyMap<string, ConfigSource> {
  const out = new Map<string, ConfigSource>();
  for (const key of input.keys) {
    const fileVariable = input.fileVariables.get(key);
    const written = input.inFile.get(key);
    const overrides = written === undefined ? {} : { overrides: { value: input.fileValues[written], ...(written === key ? {} : { as: written }) } };
    if (fileVariable) out.set(key, { kind: "file-variable", ...fileVariable, ...overrides });
    else if (input.environment.has(key)) out.set(key, { kind: "environment", variable: key, ...overrides });
    else if (written !== undefined) out.set(key, { kind: "config.json", path: input.path, ...(written === key ? {} : { as: written }) });
    else out.set(key, { kind: "default" });
  }
  return out;
}

/** What `config show --json` gives as `source`: one of four words, whatever the key. */
export type SourceName = "default" | "config.json" | "environment" | "secret file";

export function sourceName(source: ConfigSource): SourceName {
  return source.kind === "file-variable" ? "secret file" : source.kind;
}

/** A short label for tables: `config.json`, `config.json (as OLD)`, `environment`, `secret file (KEY_FILE)`, `default`. */
export function sourceLabel(source: ConfigSource): string {
  switch (source.kind) {
    case "file-variable":
      return `secret file (${source.variable})`;
    case "environment":
      return "environment";
    case "config.json":
      return source.as ? `config.json (as ${source.as})` : "config.json";
    case "default":
      return "default";
  }
}

/**
 * One sentence naming where `key`'s value comes from and where to change it. `inContainer`: the environment comes
 * from the compose file (and `.env`), which only `docker compose up -d` applies.
 */
export function describeSource(key: string, source: ConfigSource, inContainer: boolean): string {
  switch (source.kind) {
    case "file-variable":
      return `${key} comes from the file ${source.file} (named by ${source.variable}), which wins over config.json.${ignored(key, source)}`;
    case "environment":
      if (inContainer && IMAGE_ENV_KEYS.includes(key)) {
        return (
          `${key} comes from the environment variable ${key}, which wins over config.json: the image sets it, so that autoscan listens on the port ` +
          `docker-compose.yml publishes; the host's port is AUTOSCAN_PORT in .env.${source.overrides ? ` config.json's ${source.overrides.as ?? key} has no effect in the container: remove it (a moved-over port is kept with AUTOSCAN_PORT).` : ""}`
        );
      }
      return (inContainer && COMPOSE_ENV_KEYS.includes(key)
        ? `${key} comes from the environment variable ${key}, which wins over config.json: docker-compose.yml sets it from .env (or your shell). Change it there and run 'docker compose up -d' ('docker restart' keeps the old value).`
        : `${key} comes from the environment variable ${key}, which wins over config.json: change or unset the variable where autoscan is started${inContainer ? " (the compose file and its .env, or docker run -e; 'docker compose up -d' applies a compose file's change, 'docker restart' does not)" : ""}.`) + ignored(key, source);
    case "config.json":
      return `${key} is set in ${source.path}${source.as ? ` (as ${source.as})` : ""}.`;
    case "default":
      return `${key} is in no file: its default applies (add it to config.json to change it).`;
  }
}

function ignored(key: string, source: { readonly overrides?: OverriddenValue }): string {
  if (!source.overrides) return "";
  return ` config.json also holds ${source.overrides.as ?? key}, which is ignored while the variable is set: remove it from config.json, or unset the variable to use it.`;
}
