import { unbuiltFeatureWarnings } from "../../config/features.ts";
import { SERVER_PASS_MISSING, loadConfig } from "../../config/load.ts";
import { describeSource, type ConfigSource } from "../../config/provenance.ts";
import type { Config } from "../../config/schema.ts";
import type { Settings } from "../../config/settings.ts";
import { ConfigError, describeError } from "../../core/errors.ts";
import type { Logger } from "../../core/logger.ts";
import { anchorsFamily } from "../../ops/doctor/anchors.ts";
import { arrFamily } from "../../ops/doctor/arr.ts";
import { skip, type CheckResult } from "../../ops/doctor/check.ts";
import { withSources } from "../../ops/doctor/blame.ts";
import { configFamily, type ConfigOutcome } from "../../ops/doctor/config-checks.ts";
import { dataDirFamily } from "../../ops/doctor/data-dir.ts";
import { databaseFamily } from "../../ops/doctor/database.ts";
import { driveFamily, rcFamily } from "../../ops/doctor/drive.ts";
import { mappingFamily } from "../../ops/doctor/mappings.ts";
import { notifyFamily } from "../../ops/doctor/notify.ts";
import { watchFamily } from "../../ops/doctor/watch.ts";
import { plexFamily } from "../../ops/doctor/plex.ts";
import { connectHost, portFamily } from "../../ops/doctor/port.ts";
import { refusedFamily, type RefusedProbe } from "../../ops/doctor/refused.ts";
import { httpCall } from "../../http/http-call.ts";
import { runChecks, type CheckFamily, type DoctorReport } from "../../ops/doctor/run-checks.ts";
import { scannerFamily } from "../../ops/doctor/scanner.ts";
import { targetsFamily } from "../../ops/doctor/targets.ts";
import { createDiskProbe, type DiskEntry } from "../../paths/disk-probe.ts";
import { createPlexClient } from "../../targets/plex/client.ts";
import { pgMigrations } from "../../queue/postgres/migrations/index.ts";
import { BUILT_FEATURES } from "../built-features.ts";
import type { Runtime } from "../runtime.ts";
import { isInContainer } from "../in-container.ts";
import { driveProbe, rcProbe } from "./doctor-drive.ts";
import { notifyProbe } from "./doctor-notify.ts";
import { targetProbes } from "./doctor-targets.ts";
import { STAT_TIMEOUT_MS, sharedDiskProbe } from "./queue.ts";

/**
 * Config → the doctor's check families, each given small probes made from the modules the service itself uses (the
 * Plex client, the Docker executor and preset detection, the Drive credentials, the disk probe), so doctor sees what
 * the server would. `autoscan doctor` runs them all; the server runs them at start (`runStartupChecks`) and logs
 * each warning or error once.
 *
 * The further scan targets (TARGETS) are one family after Plex's (doctor-targets.ts builds their probes), and
 * SERVER_ANCHORS one more (doctor only: at start the anchor watch reports them itself).
 */
export interface DoctorInput {
  readonly settings: Settings;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The config as loaded, or why it could not be (see `loadDoctorConfig`). */
  readonly loaded: DoctorConfig;
  readonly log: Logger;
  /** Whether autoscan runs inside a container (default: /.dockerenv or /run/.containerenv exists). */
  readonly inContainer?: boolean;
  /** `startup`: the server's own run (no port check: the server binds it; no Drive call: the monitor makes it). */
  readonly mode?: "doctor" | "startup";
  /** How long one look at a disk may take (default 3 s; Plex calls take at most min(PLEX_TIMEOUT, 10 s)). */
  readonly diskTimeoutMs?: number;
  /** The disk probe to look through (the server's shared one at start; a fresh one for doctor). */
  readonly stat?: (path: string) => Promise<DiskEntry>;
}

export type DoctorConfig =
  | { readonly config: Config; readonly outcome: ConfigOutcome; readonly sources?: ReadonlyMap<string, ConfigSource> }
  | { readonly config?: undefined; readonly outcome: ConfigOutcome; readonly sources?: undefined };

/**
 * Loads the config for doctor: a bad or missing config is a finding, not a stop. Doctor does not need SERVER_PASS;
 * without it, it warns as `config check` does (only the server needs it).
 */
export async function loadDoctorConfig(settings: Settings, env: Readonly<Record<string, string | undefined>>): Promise<DoctorConfig> {
  const path = settings.configPath;
  try {
    const loaded = await loadConfig(path, env, false);
    if (loaded.kind !== "loaded") throw new ConfigError(`No config at ${path}.`);
    const serverPass = loaded.config.SERVER_PASS === "" ? [SERVER_PASS_MISSING] : [];
    const warnings = [...serverPass, ...loaded.warnings, ...unbuiltFeatureWarnings(loaded.config, BUILT_FEATURES)];
    return { config: loaded.config, sources: loaded.sources, outcome: { kind: "loaded", path, warnings } };
  } catch (error) {
    return failed(path, error);
  }
}

function failed(path: string, error: unknown): DoctorConfig {
  if (!(error instanceof ConfigError)) throw error;
  const missing = error.message.startsWith("No config file") || error.message.startsWith("Cannot read");
  return {
    outcome: {
      kind: "failed",
      path,
      message: error.message.replace(/:$/, "."),
      problems: error.problems,
      ...(missing ? { fix: error.problems.join(" ") || `Create ${path} with 'autoscan config init'.` } : {}),
    },
  };
}

export async function runDoctor(input: DoctorInput, signal?: AbortSignal): Promise<DoctorReport> {
  const report = await runChecks(await buildFamilies(input), signal);
  const sources = input.loaded.sources;
  if (!sources) return report;
  const inContainer = input.inContainer ?? isInContainer();
  // config.json is where a user looks first: only the other sources (which win over it, or a default) are said.
  return withSources(report, (key) => {
    const source = sources.get(key);
    return source && source.kind !== "config.json" ? describeSource(key, source, inContainer) : undefined;
  });
}

export async function buildFamilies(input: DoctorInput): Promise<CheckFamily[]> {
  const { settings, loaded, log } = input;
  const startup = input.mode === "startup";
  const diskTimeoutMs = input.diskTimeoutMs ?? 3000;
  const stat = input.stat ?? createDiskProbe({ log, timeoutMs: diskTimeoutMs }).stat;
  const families: CheckFamily[] = [configFamily(loaded.outcome), dataDirFamily({ dir: settings.dataDir, look: stat })];
  const config = loaded.config;
  if (!config) {
    families.push({
      name: "rest",
      run: async () => [skip("rest", "Other checks", "Skipped until the config is valid (database, Plex, mappings, targets, *arr apps, anchors, scanner, Drive, port).")],
    });
    return families;
  }
  // The queue's store. At start the store itself connects, migrates and says what is wrong: doctor only.
  if (!startup) {
    families.push(
      config.SERVER_DATABASE_URL === ""
        ? databaseFamily({ kind: "embedded", queueFile: settings.queueFile })
        : databaseFamily({
            kind: "postgresql",
            // The driver (pg) is loaded only when a database is set, as the service itself does.
            probe: (await import("./doctor-database.ts")).databaseProbe({ url: config.SERVER_DATABASE_URL }),
            knownVersion: Math.max(0, ...pgMigrations.map((step) => step.version)),
            inContainer: input.inContainer ?? isInContainer(),
          }),
    );
  }
  const plexTimeoutS = Math.min(config.PLEX_TIMEOUT, 10);
  const scannerMode = config.PLEX_SCAN_METHOD === "scanner" || config.USE_DOCKER;
  const client = createPlexClient({ url: config.PLEX_LOCAL_URL, token: config.PLEX_TOKEN, timeoutMs: plexTimeoutS * 1000 });
  families.push(
    plexFamily({
      probe: {
        url: config.PLEX_LOCAL_URL,
        hasToken: config.PLEX_TOKEN !== "",
        serverInfo: (signal) => client.serverInfo(signal),
        listSections: async (signal) =>
          (await client.listSections(signal)).map(({ id, title, locations }) => ({ id, title, locations })),
      },
      inContainer: input.inContainer ?? isInContainer(),
      tokenRequired: config.PLEX_SCAN_METHOD === "api",
      timeoutSeconds: plexTimeoutS,
    }),
  );
  families.push(
    mappingFamily({
      mappings: config.SERVER_PATH_MAPPINGS,
      existMappings: config.SERVER_FILE_EXIST_PATH_MAPPINGS,
      stat,
      timeoutSeconds: Math.round(diskTimeoutMs / 100) / 10,
      inContainer: input.inContainer ?? isInContainer(),
    }),
  );
  // TARGETS after Plex: their mapping checks read Plex's library folders (the primary form).
  if (Object.keys(config.TARGETS).length > 0) {
    families.push(targetsFamily({ targets: targetProbes(config), inContainer: input.inContainer ?? isInContainer() }));
  }
  // The *arr apps whose history the backfill reads (ARR): reachable, key accepted, which app and version, history.
  if (Object.keys(config.ARR).length > 0) {
    const { arrProbes } = await import("./doctor-arr.ts");
    families.push(arrFamily({ apps: arrProbes(config, log), inContainer: input.inContainer ?? isInContainer() }));
  }
  // At start the anchor watch itself says which anchors are missing (src/paths/anchors.ts).
  if (config.SERVER_ANCHORS.length > 0 && !startup) {
    families.push(anchorsFamily({ anchors: config.SERVER_ANCHORS, stat, timeoutSeconds: Math.round(diskTimeoutMs / 100) / 10 }));
  }
  // The Docker client (dockerode) is loaded only for the scanner mode, as the service itself does.
  if (scannerMode) families.push(scannerFamily((await import("./doctor-scanner.ts")).scannerProbe(config, settings)));
  if (config.CLOUD.ENABLED) families.push(driveFamily(await driveProbe(input, config, startup)));
  if (config.RCLONE.RC_CACHE_REFRESH.ENABLED) families.push(rcFamily(rcProbe(config.RCLONE.RC_CACHE_REFRESH.RC_URL)));
  if (!startup) families.push(portFamily({ ip: config.SERVER_IP, port: config.SERVER_PORT }));
  if (!startup && config.SERVER_PASS !== "") families.push(refusedFamily(refusedProbe(config)));
  // NOTIFY: what each notifier is, and whether the running server can deliver to it (doctor itself sends nothing).
  if (!startup && Object.keys(config.NOTIFY).length > 0) families.push(notifyFamily(notifyProbe(config)));
  // WATCH: each path there, its filesystem sending change notifications, the kernel's folder-watch limit.
  if (!startup && Object.keys(config.WATCH).length > 0) families.push(watchFamily((await import("./doctor-watch.ts")).watchProbe(config, log)));
  return families;
}

/**
 * The server's run of the same checks, at start: every `!` and `✗` logged once as a warning; the server starts
 * whatever they say. Fire and forget: never throws, never delays the start.
 */
export async function runStartupChecks(runtime: Pick<Runtime, "config" | "settings" | "log">, log: Logger): Promise<void> {
  const doctorLog = log.child({ component: "DOCTOR" });
  try {
    const loaded: DoctorConfig = { config: runtime.config, outcome: { kind: "loaded", path: runtime.settings.configPath, warnings: [] } };
    const report = await runDoctor({
      settings: runtime.settings,
      env: {},
      loaded,
      log: runtime.log,
      mode: "startup",
      stat: sharedDiskProbe(runtime.log).stat,
      diskTimeoutMs: STAT_TIMEOUT_MS,
    });
    const problems = report.checks.filter((check) => check.status === "warn" || check.status === "error");
    for (const check of problems) doctorLog.warn({ check: check.id }, startupLine(check));
    if (problems.length > 0) doctorLog.warn(`Start-up checks: ${problems.length} problem(s) above; 'autoscan doctor' shows all checks.`);
  } catch (error) {
    doctorLog.warn({ err: error }, `Start-up checks could not run: ${describeError(error)}`);
  }
}

/** `Plex: Nothing listens at plex:32400 (connection refused). Fix: Start Plex, …` */
function startupLine(check: CheckResult): string {
  return `${check.title}: ${check.detail}${check.fix ? ` Fix: ${check.fix}` : ""}`;
}

/** The running server's History, failed rows refused at intake ("Not queued: …"), through its API on this machine. */
function refusedProbe(config: Config): RefusedProbe {
  return {
    async recent() {
      const host = connectHost(config.SERVER_IP);
      const url = `http://${host.includes(":") ? `[${host}]` : host}:${String(config.SERVER_PORT)}${config.SERVER_URL_BASE}/api/${encodeURIComponent(config.SERVER_PASS)}?cmd=history&state=failed&limit=500`;
      const answer = await httpCall({ method: "GET", url, timeoutMs: 3000, maxBytes: 4 * 1024 * 1024 }).catch(() => undefined);
      if (answer?.status !== 200) return undefined;
      const body = JSON.parse(answer.body) as { history?: { folder: string; lastError?: string | null; finishedAt?: string | null }[] };
      return (body.history ?? [])
        .filter((item) => item.lastError?.startsWith("Not queued: "))
        .map((item) => ({ folder: item.folder, reason: item.lastError ?? "", at: item.finishedAt ?? "" }));
    },
  };
}
