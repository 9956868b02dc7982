import { BUILT_FEATURES } from "../../config/built-features.ts";
import { isContainerServerRunning, isInContainer } from "../../core/in-container.ts";
import { unbuiltFeatureWarnings } from "../../config/features.ts";
import { SERVER_PASS_MISSING, loadConfig } from "../../config/load.ts";
import { describeSource, type ConfigSource } from "../../config/provenance.ts";
import type { Config } from "../../config/schema.ts";
import type { Settings } from "../../config/settings.ts";
import { ConfigError, describeError } from "../../core/errors.ts";
import type { Logger } from "../../core/logger.ts";
import { createDiskProbe, type DiskEntry } from "../../paths/disk-probe.ts";
import { STAT_TIMEOUT_MS, sharedDiskProbe } from "../../paths/shared-disk-probe.ts";
import { pgMigrations } from "../../queue/postgres/migrations/index.ts";
import { anchorChecks } from "./anchors.ts";
import { arrChecks } from "./arr.ts";
import { fail, ok, runChecks, skip, warn, type CheckFamily, type CheckResult, type DoctorReport } from "./check.ts";
import { dataDirChecks } from "./data-dir.ts";
import { databaseChecks, type DatabaseCheckOptions } from "./database.ts";
import { driveChecks, rcChecks } from "./drive.ts";
import { mappingChecks } from "./mappings.ts";
import { notifyChecks } from "./notify.ts";
import { plexChecks } from "./plex.ts";
import { containerPortCheck } from "./container-port.ts";
import { portCheck, refusedChecks } from "./running-server.ts";
import { targetsChecks } from "./targets.ts";
import { watchChecks } from "./watch.ts";

/**
 * Config → the doctor's check families, each looking through the modules the service itself uses (the Plex client,
 * the Docker executor and preset detection, the Drive credentials, the disk probe), so doctor sees what the server
 * would. `autoscan doctor` runs them all; the server runs them at start (`runStartupChecks`) and logs each warning
 * or error once. Each family runs after the ones above it: the TARGETS' and the mappings' checks read Plex's library
 * folders (the primary form).
 */
export interface DoctorInput {
  readonly settings: Settings;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly loaded: DoctorConfig;
  readonly log: Logger;
  /** Whether autoscan runs inside a container (default: /.dockerenv or /run/.containerenv exists). */
  readonly inContainer?: boolean;
  /** Whether this container's main process is `autoscan server`, which must then answer on SERVER_PORT (default: /proc/1). */
  readonly serverInContainer?: boolean;
  /** `startup`: the server's own run (no port check: the server binds it; no Drive call: the monitor makes it). */
  readonly mode?: "doctor" | "startup";
  /** How long one look at a disk may take (default 3 s; Plex calls take at most min(PLEX_TIMEOUT, 10 s)). */
  readonly diskTimeoutMs?: number;
  /** The disk probe to look through (the server's shared one at start; a fresh one for doctor). */
  readonly stat?: (path: string) => Promise<DiskEntry>;
}

/** The config as loaded (none when it could not be), and the config's own lines (see `loadDoctorConfig`). */
export interface DoctorConfig {
  readonly config?: Config;
  readonly sources?: ReadonlyMap<string, ConfigSource>;
  readonly checks: readonly CheckResult[];
}

/**
 * Loads the config for doctor: a bad or missing config is a finding, not a stop. Its lines are what `autoscan config
 * check` says: every problem (each its own line, already saying what was expected), and the warnings that do not
 * stop the service. Doctor does not need SERVER_PASS; without it, it warns as `config check` does (only the server
 * needs it).
 */
export async function loadDoctorConfig(
  settings: Settings,
  env: Readonly<Record<string, string | undefined>>,
  inContainer: boolean = isInContainer(),
): Promise<DoctorConfig> {
  const path = settings.configPath;
  try {
    const loaded = await loadConfig(path, env, false);
    if (loaded.kind !== "loaded") throw new ConfigError(`No config at ${path}.`);
    const serverPass = loaded.config.SERVER_PASS === "" ? [SERVER_PASS_MISSING] : [];
    const warnings = [...serverPass, ...loaded.warnings, ...unbuiltFeatureWarnings(loaded.config, BUILT_FEATURES)];
    // A legacy key is fixed by the command that rewrites it (and says what it did), not by hand.
    const fixOf = (warning: string): string => (loaded.upgradable.includes(warning) ? upgradeFix(settings, inContainer) : `Edit ${path}.`);
    const checks = [ok("config", "Config", `${path} is valid.`), ...warnings.map((warning, i) => warn(`config.warning.${i + 1}`, "Config", warning, fixOf(warning)))];
    return { config: loaded.config, sources: loaded.sources, checks };
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    const message = error.message.replace(/:$/, ".");
    // No file, or one that cannot be read: the loader's message is the finding.
    if (error.message.startsWith("No config file") || error.message.startsWith("Cannot read")) {
      return { checks: [fail("config", "Config", message, error.problems.join(" ") || `Create ${path} with 'autoscan config init'.`)] };
    }
    if (error.problems.length === 0) return { checks: [fail("config", "Config", message, `Edit ${path}.`)] };
    const fix = `Edit ${path}; 'autoscan config check' shows the same list.`;
    return { checks: error.problems.map((problem, i) => fail(`config.problem.${i + 1}`, "Config", problem, fix)) };
  }
}

/** `autoscan config upgrade`, as the user types it where doctor ran: through `docker exec` in a container. */
function upgradeFix(settings: Settings, inContainer: boolean): string {
  const config = settings.origin.config === "flag" ? ` --config ${settings.configPath}` : "";
  const command = `${inContainer ? "docker exec autoscan " : ""}autoscan config upgrade${config}`;
  return `Run '${command}': it renames or drops each legacy key and names it ('--dry-run' shows it first; the old file is kept as config.json.bak).`;
}

export async function runDoctor(input: DoctorInput, signal?: AbortSignal): Promise<DoctorReport> {
  const inContainer = input.inContainer ?? isInContainer();
  const report = await runChecks(buildFamilies(input, inContainer), signal);
  const sources = input.loaded.sources;
  if (!sources) return report;
  // config.json is where a user looks first: only the other sources (which win over it, or a default) are said.
  return withSources(report, (key) => {
    const source = sources.get(key);
    return source && source.kind !== "config.json" ? describeSource(key, source, inContainer) : undefined;
  });
}

function buildFamilies(input: DoctorInput, inContainer: boolean): CheckFamily[] {
  const { settings, loaded, log } = input;
  const startup = input.mode === "startup";
  const diskTimeoutMs = input.diskTimeoutMs ?? 3000;
  const timeoutSeconds = Math.round(diskTimeoutMs / 100) / 10;
  const stat = input.stat ?? createDiskProbe({ log, timeoutMs: diskTimeoutMs }).stat;
  const families: CheckFamily[] = [{ name: "config", run: async () => loaded.checks }, { name: "data-dir", run: () => dataDirChecks(settings.dataDir, stat) }];
  const config = loaded.config;
  if (!config) {
    const reason = "Skipped until the config is valid (database, Plex, mappings, targets, *arr apps, anchors, scanner, Drive, port).";
    return [...families, { name: "rest", run: async () => [skip("rest", "Other checks", reason)] }];
  }
  const has = (table: object): boolean => Object.keys(table).length > 0;
  const mappingOptions = { mappings: config.SERVER_PATH_MAPPINGS, existMappings: config.SERVER_FILE_EXIST_PATH_MAPPINGS, stat, timeoutSeconds, inContainer };
  // Each entry: whether it applies, the family's name, and its checks. At start the server itself connects the store,
  // binds the port, watches the anchors and makes the Drive call; doctor only reads the running server beside it.
  const table: [boolean, string, CheckFamily["run"]][] = [
    [!startup, "database", (_, signal) => databaseChecks(databaseOptions(config, settings.queueFile, inContainer), signal)],
    [true, "plex", (findings, signal) => plexChecks(config, inContainer, findings, signal)],
    [true, "mappings", (findings) => mappingChecks(mappingOptions, findings)],
    [has(config.TARGETS), "targets", (findings, signal) => targetsChecks(config, inContainer, findings, signal)],
    [has(config.ARR), "arr", (_, signal) => arrChecks(config, log, inContainer, signal)],
    [config.SERVER_ANCHORS.length > 0 && !startup, "anchors", () => anchorChecks(config.SERVER_ANCHORS, stat, timeoutSeconds)],
    // The scanner's checks (and the Docker modules they use) load only for the scanner method, as the service does.
    [config.PLEX_SCAN_METHOD === "scanner" || config.USE_DOCKER, "scanner", async () => (await import("./scanner.ts")).scannerChecks(config, settings.dockerHost)],
    [config.CLOUD.ENABLED, "drive", () => driveChecks({ config, settings, env: input.env, log, startup })],
    [config.RCLONE.RC_CACHE_REFRESH.ENABLED, "rclone-rc", () => rcChecks(config.RCLONE.RC_CACHE_REFRESH.RC_URL)],
    [!startup, "port", async () => [await portCheck(config, { serverExpected: input.serverInContainer ?? (inContainer && isContainerServerRunning()) })]],
    // At start too: a moved-over SERVER_PORT the image overrides is said once in the server's log.
    [inContainer, "container-port", async () => [await containerPortCheck(config, settings.configPath, loaded.sources?.get("SERVER_PORT"))]],
    [!startup && config.SERVER_PASS !== "", "refused", () => refusedChecks(config)],
    [!startup && has(config.NOTIFY), "notify", () => notifyChecks(config)],
    [!startup && has(config.WATCH), "watch", () => watchChecks(config, stat)],
  ];
  return [...families, ...table.filter(([applies]) => applies).map(([, name, run]) => ({ name, run }))];
}

/**
 * The server's run of the same checks, at start: every `!` and `✗` logged once as a warning (`Plex: Nothing listens at
 * plex:32400 (connection refused). Fix: Start Plex, …`); the server starts whatever they say. Fire and forget: never
 * throws, never delays the start.
 */
export async function runStartupChecks(runtime: { readonly config: Config; readonly settings: Settings; readonly log: Logger }, log: Logger): Promise<void> {
  const doctorLog = log.child({ component: "DOCTOR" });
  try {
    const loaded = { config: runtime.config, checks: [] };
    const stat = sharedDiskProbe(runtime.log).stat;
    const report = await runDoctor({ settings: runtime.settings, env: {}, loaded, log: runtime.log, mode: "startup", stat, diskTimeoutMs: STAT_TIMEOUT_MS });
    const problems = report.checks.filter((check) => check.status === "warn" || check.status === "error");
    for (const check of problems) doctorLog.warn({ check: check.id }, `${check.title}: ${check.detail}${check.fix ? ` Fix: ${check.fix}` : ""}`);
    if (problems.length > 0) doctorLog.warn(`Start-up checks: ${problems.length} problem(s) above; 'autoscan doctor' shows all checks.`);
  } catch (error) {
    doctorLog.warn({ err: error }, `Start-up checks could not run: ${describeError(error)}`);
  }
}

/** The queue's store: the embedded file, or PostgreSQL at SERVER_DATABASE_URL. */
function databaseOptions(config: Config, queueFile: string, inContainer: boolean): DatabaseCheckOptions {
  if (config.SERVER_DATABASE_URL === "") return { kind: "embedded", queueFile };
  const knownVersion = Math.max(0, ...pgMigrations.map((step) => step.version));
  return { kind: "postgresql", url: config.SERVER_DATABASE_URL, knownVersion, inContainer };
}

/**
 * A fix that names a config key also says where that key's value comes from (config.json, an environment variable
 * that wins over it, a `KEY_FILE` variable, the default), so "check PLEX_LOCAL_URL" points at the place to edit.
 * `describe` answers for a top-level key (config/provenance.ts), undefined for anything else.
 */
function withSources(report: DoctorReport, describe: (key: string) => string | undefined): DoctorReport {
  const withSource = (check: CheckResult): CheckResult => {
    if (!check.fix || (check.status !== "warn" && check.status !== "error")) return check;
    const named = [...new Set(check.fix.match(/\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b/g) ?? [])];
    const sentences = named.map(describe).filter((sentence): sentence is string => sentence !== undefined);
    return sentences.length ? { ...check, fix: `${check.fix} ${sentences.join(" ")}` } : check;
  };
  return { ...report, checks: report.checks.map(withSource) };
}
