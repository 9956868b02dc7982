import { loadConfig } from "../../config/load.ts";
import { defaultConfig } from "../../config/defaults.ts";
import { describeSource, IMAGE_ENV_KEYS, sourceLabel, sourceName, type ConfigSource, type OverriddenValue } from "../../config/provenance.ts";
import { resolveSettings, type Settings } from "../../config/settings.ts";
import { maskDatabaseUrl } from "../../core/database-url.ts";
import { shownNotifierUrl } from "../../notify/notifier-url.ts";
import { booleanFlag, type CommandSpec } from "../command.ts";
import { isInContainer } from "../../core/in-container.ts";

/**
 * `autoscan config show [--json]`: the config autoscan would run with — every top-level key, its value (secrets
 * masked) and where it comes from: the default (a key in no file), config.json, an environment variable, or a secret
 * file (a `KEY_FILE` variable). Answers "I changed it, why does autoscan still use the old value?": a variable wins over
 * the file, and a value config.json also holds for that key is shown as ignored. Answers "what did I change?": the keys
 * whose value is not the default are listed at the end.
 */
export const configShowCommand: CommandSpec = {
  usage: "autoscan config show [--json] [--config PATH]",
  description:
    "Prints each key with its value and its source: default (in no file), config.json, environment (an environment " +
    "variable of that name, which wins over the file; in Docker Compose, .env through docker-compose.yml), or secret file " +
    "(a KEY_FILE variable). A config.json value that a variable overrides is shown as ignored. Secrets (SERVER_PASS, " +
    "tokens, passwords, API keys, the database URL's password) are masked.",
  options: { json: { type: "boolean" } },
  optionHelp: {
    json:
      "print {configFile, keys: {KEY: {value, source, detail, changed, variable?, file?, writtenAs?, ignoredFileValue?}}} as JSON on stdout; " +
      'source is one of "default", "config.json", "environment", "secret file"',
  },
  async run({ values, io }) {
    const settings = resolveSettings(values, io.env, io.installDir);
    const loaded = await loadConfig(settings.configPath, io.env, false);
    if (loaded.kind !== "loaded") return 2;
    const inContainer = isInContainer();
    const defaults = defaultConfig() as Record<string, unknown>;
    const rows = Object.entries(loaded.config).map(([key, value]): Row => {
      const source: ConfigSource = loaded.sources.get(key) ?? { kind: "default" };
      return {
        key,
        value: masked(key, value),
        source,
        detail: describeSource(key, source, inContainer),
        changed: JSON.stringify(value) !== JSON.stringify(defaults[key]),
      };
    });
    if (booleanFlag(values, "json")) {
      io.stdout.write(`${JSON.stringify({ configFile: settings.configPath, keys: Object.fromEntries(rows.map((row) => [row.key, jsonEntry(row)])) }, null, 2)}\n`);
      return 0;
    }
    io.stdout.write(renderTable(settings, rows, inContainer));
    return 0;
  },
};

interface Row {
  readonly key: string;
  readonly value: unknown;
  readonly source: ConfigSource;
  readonly detail: string;
  /** The value is not the key's default. */
  readonly changed: boolean;
}

function jsonEntry(row: Row): Record<string, unknown> {
  const { source } = row;
  return {
    value: row.value,
    source: sourceName(source),
    detail: row.detail,
    changed: row.changed,
    ...(source.kind === "environment" || source.kind === "file-variable" ? { variable: source.variable } : {}),
    ...(source.kind === "file-variable" ? { file: source.file } : {}),
    ...(source.kind === "config.json" && source.as ? { writtenAs: source.as } : {}),
    ...(overridden(source) ? { ignoredFileValue: ignoredValue(row.key, source) } : {}),
  };
}

function overridden(source: ConfigSource): source is Extract<ConfigSource, { overrides?: OverriddenValue }> & { overrides: OverriddenValue } {
  return (source.kind === "environment" || source.kind === "file-variable") && source.overrides !== undefined;
}

/** The ignored file value, masked like the value in force (its old name, when written under one). */
function ignoredValue(key: string, source: { readonly overrides: OverriddenValue }): { value: unknown; writtenAs?: string } {
  return { value: masked(key, source.overrides.value), ...(source.overrides.as ? { writtenAs: source.overrides.as } : {}) };
}

function renderTable(settings: Settings, rows: readonly Row[], inContainer: boolean): string {
  const ignoredLabel = (row: Row): string => {
    const as = overridden(row.source) ? row.source.overrides.as : undefined;
    return `↳ config.json${as ? ` (as ${as})` : ""}, ignored`;
  };
  const width = Math.max(3, ...rows.map((row) => row.key.length));
  const fromWidth = Math.max(4, ...rows.map((row) => sourceLabel(row.source).length), ...rows.filter((row) => overridden(row.source)).map((row) => ignoredLabel(row).length));
  const line = (key: string, from: string, value: string): string => `${key.padEnd(width)}  ${from.padEnd(fromWidth)}  ${value}`.trimEnd();
  const lines = rows.flatMap((row) => [
    line(row.key, sourceLabel(row.source), shown(row.value)),
    ...(overridden(row.source) ? [line("", ignoredLabel(row), shown(ignoredValue(row.key, row.source).value))] : []),
  ]);
  return [
    `Config file: ${settings.configPath}${settings.origin.config === "default" ? "" : ` (from ${settings.origin.config === "flag" ? "--config" : "AUTOSCAN_CONFIG"})`}`,
    "",
    line("KEY", "FROM", "VALUE"),
    ...lines,
    "",
    ...footer(rows, inContainer),
    "",
  ].join("\n");
}

/** What the table means for the user: what is set outside config.json and where, what in the file is ignored, what changed. */
function footer(rows: readonly Row[], inContainer: boolean): string[] {
  const fromEnv = rows.filter((row) => row.source.kind === "environment" || row.source.kind === "file-variable").map((row) => row.key);
  // In a container the image's own variables (where the server listens) are not the user's to unset.
  const byImage = inContainer ? fromEnv.filter((key) => IMAGE_ENV_KEYS.includes(key)) : [];
  const ignored = rows.filter((row) => overridden(row.source) && !byImage.includes(row.key)).map((row) => row.key);
  const ignoredByImage = rows.filter((row) => overridden(row.source) && byImage.includes(row.key)).map((row) => row.key);
  const changed = rows.filter((row) => row.changed).map((row) => row.key);
  return [
    fromEnv.length
      ? `Set outside config.json (these win over the file): ${fromEnv.join(", ")}. ` +
        (inContainer
          ? [
              byImage.length ? `The image sets ${byImage.join(" and ")} (autoscan listens where docker-compose.yml publishes; the host's port is AUTOSCAN_PORT in .env).` : "",
              fromEnv.length > byImage.length
                ? `In a container ${byImage.length ? "the others" : "they"} come from the compose file (docker-compose.yml takes them from .env) or docker run -e: change them there, then 'docker compose up -d' ('docker restart' keeps the old values).`
                : "",
            ].filter(Boolean).join(" ")
          : "Change or unset them where autoscan is started.")
      : "Nothing is set outside config.json.",
    ...(ignored.length
      ? [`config.json also holds ${ignored.join(", ")}, ignored while the variable is set: remove ${ignored.length === 1 ? "it" : "them"} from config.json, or unset the variable to use the file's value.`]
      : []),
    ...(ignoredByImage.length
      ? [`config.json also holds ${ignoredByImage.join(", ")}, which has no effect in the container: remove ${ignoredByImage.length === 1 ? "it" : "them"} (a moved-over port is kept with AUTOSCAN_PORT in .env).`]
      : []),
    changed.length ? `Not at their defaults: ${changed.join(", ")}.` : "Every key is at its default.",
  ];
}

function shown(value: unknown): string {
  return typeof value === "string" ? (value === "" ? '""' : value) : JSON.stringify(value);
}

/** Field names whose values are secrets, at any depth (SERVER_PASS, PLEX_TOKEN, TARGETS.*.TOKEN, ARR.*.API_KEY …). */
const SECRET = /TOKEN|PASS|SECRET|API_KEY/i;

function masked(key: string, value: unknown, parents: readonly string[] = []): unknown {
  if (key === "SERVER_DATABASE_URL" && typeof value === "string") return value === "" ? value : maskDatabaseUrl(value);
  // A notifier's URL is its secret (a Discord webhook's token is in the path): only its scheme and host are shown.
  if (parents.length === 2 && parents[0] === "NOTIFY" && key === "URL" && typeof value === "string") return `${shownNotifierUrl(value)}/<hidden>`;
  if (SECRET.test(key) && typeof value === "string") return value === "" ? "" : `<set, ${String(value.length)} characters>`;
  if (Array.isArray(value)) return value.map((item) => masked("", item));
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([name, inner]) => [name, masked(name, inner, [...parents, key])]));
  }
  return value;
}
