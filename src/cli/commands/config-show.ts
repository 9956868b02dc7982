import { loadConfig } from "../../config/load.ts";
import { describeSource, sourceLabel, type ConfigSource } from "../../config/provenance.ts";
import { resolveSettings, type Settings } from "../../config/settings.ts";
import { maskDatabaseUrl } from "../../core/database-url.ts";
import { shownNotifierUrl } from "../../notify/notifier-url.ts";
import { booleanFlag, type CommandSpec } from "../command.ts";
import { isInContainer } from "../../core/in-container.ts";

/**
 * `autoscan config show [--json]`: the config autoscan would run with — every top-level key, its value (secrets
 * masked) and where it comes from (config.json, an environment variable, a `KEY_FILE` variable, or the default).
 * Answers "I changed it, why does autoscan still use the old value?": an environment variable wins over the file.
 */
export const configShowCommand: CommandSpec = {
  usage: "autoscan config show [--json] [--config PATH]",
  description:
    "Prints each key with its value and its source: config.json, environment (an environment variable of that name, " +
    "which wins over the file; in Docker Compose, .env through docker-compose.yml), a KEY_FILE variable, or default. " +
    "Secrets (SERVER_PASS, tokens, passwords, API keys, the database URL's password) are masked.",
  options: { json: { type: "boolean" } },
  optionHelp: { json: "print {configFile, keys: {KEY: {value, source, detail}}} as JSON on stdout" },
  async run({ values, io }) {
    const settings = resolveSettings(values, io.env, io.installDir);
    const loaded = await loadConfig(settings.configPath, io.env, false);
    if (loaded.kind !== "loaded") return 2;
    const inContainer = isInContainer();
    const rows = Object.entries(loaded.config).map(([key, value]) => {
      const source: ConfigSource = loaded.sources.get(key) ?? { kind: "default" };
      return { key, value: masked(key, value), source, detail: describeSource(key, source, inContainer) };
    });
    if (booleanFlag(values, "json")) {
      const keys = Object.fromEntries(rows.map((row) => [row.key, { value: row.value, source: sourceLabel(row.source), detail: row.detail }]));
      io.stdout.write(`${JSON.stringify({ configFile: settings.configPath, keys }, null, 2)}\n`);
      return 0;
    }
    io.stdout.write(renderTable(settings, rows));
    return 0;
  },
};

interface Row {
  readonly key: string;
  readonly value: unknown;
  readonly source: ConfigSource;
}

function renderTable(settings: Settings, rows: readonly Row[]): string {
  const width = Math.max(...rows.map((row) => row.key.length));
  const lines = rows.map((row) => `${row.key.padEnd(width)}  ${sourceLabel(row.source).padEnd(11)}  ${shown(row.value)}`);
  const fromEnv = rows.filter((row) => row.source.kind === "environment" || row.source.kind === "file-variable").map((row) => row.key);
  return [
    `Config file: ${settings.configPath}${settings.origin.config === "default" ? "" : ` (from ${settings.origin.config === "flag" ? "--config" : "AUTOSCAN_CONFIG"})`}`,
    "",
    `${"KEY".padEnd(width)}  ${"FROM".padEnd(11)}  VALUE`,
    ...lines,
    "",
    fromEnv.length
      ? `Set outside config.json (these win over the file): ${fromEnv.join(", ")}. In Docker Compose, .env feeds them through docker-compose.yml; apply a change with 'docker compose up -d'.`
      : "Every value comes from config.json or the defaults.",
    "",
  ].join("\n");
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
