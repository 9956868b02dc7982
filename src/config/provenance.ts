/**
 * Where each top-level config value comes from, in the order that wins: a `KEY_FILE` variable, an environment
 * variable, config.json (under its own name or an old plex_autoscan name), else the default. `autoscan config show`
 * prints it; doctor says it beside any value it blames; the first-start message and the README say which keys the
 * compose file sets from `.env`.
 */
export type ConfigSource =
  | { readonly kind: "file-variable"; readonly variable: string; readonly file: string }
  | { readonly kind: "environment"; readonly variable: string }
  | { readonly kind: "config.json"; readonly path: string; readonly as?: string }
  | { readonly kind: "default" };

/** The config keys docker-compose.yml sets from `.env` (or the shell): they win over config.json. */
export const COMPOSE_ENV_KEYS: readonly string[] = ["PLEX_LOCAL_URL"];

export interface SourceInput {
  /** Top-level keys of the final config. */
  readonly keys: readonly string[];
  readonly path: string;
  /** Keys present in config.json, by the name the final config uses → the name written in the file. */
  readonly inFile: ReadonlyMap<string, string>;
  readonly environment: ReadonlySet<string>;
  /** Key → the `KEY_FILE` variable and the file it named. */
  readonly fileVariables: ReadonlyMap<string, { readonly variable: string; readonly file: string }>;
}

export function configSources(input: SourceInput): ReadonlyMap<string, ConfigSource> {
  const out = new Map<string, ConfigSource>();
  for (const key of input.keys) {
    const fileVariable = input.fileVariables.get(key);
    const written = input.inFile.get(key);
    if (fileVariable) out.set(key, { kind: "file-variable", ...fileVariable });
    else if (input.environment.has(key)) out.set(key, { kind: "environment", variable: key });
    else if (written !== undefined) out.set(key, { kind: "config.json", path: input.path, ...(written === key ? {} : { as: written }) });
    else out.set(key, { kind: "default" });
  }
  return out;
}

/** A short label for tables: `config.json`, `environment`, `KEY_FILE`, `default`. */
export function sourceLabel(source: ConfigSource): string {
  switch (source.kind) {
    case "file-variable":
      return source.variable;
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
      return `${key} comes from the file ${source.file} (named by ${source.variable}), which wins over config.json.`;
    case "environment":
      return inContainer && COMPOSE_ENV_KEYS.includes(key)
        ? `${key} comes from the environment variable ${key}, which wins over config.json: docker-compose.yml sets it from .env (or your shell). Change it there and run 'docker compose up -d' ('docker restart' keeps the old value).`
        : `${key} comes from the environment variable ${key}, which wins over config.json: change or unset the variable where autoscan is started${inContainer ? " ('docker compose up -d' applies a compose file's change; 'docker restart' does not)" : ""}.`;
    case "config.json":
      return `${key} is set in ${source.path}${source.as ? ` (as ${source.as})` : ""}.`;
    case "default":
      return `${key} is not set anywhere: its default applies (set it in config.json).`;
  }
}
