import { normalizePath, withTrailingSlash } from "../../paths/normalize.ts";
import { existsSync } from "node:fs";
import { access, constants, readFile, stat } from "node:fs/promises";
import { unbuiltFeatureWarnings } from "../../config/features.ts";
import { SERVER_PASS_MISSING, loadConfig } from "../../config/load.ts";
import type { Config } from "../../config/schema.ts";
import type { Settings } from "../../config/settings.ts";
import { systemClock } from "../../core/clock.ts";
import { ConfigError, describeError } from "../../core/errors.ts";
import type { Logger } from "../../core/logger.ts";
import { ContainerNotFoundError } from "../../docker/errors.ts";
import { createDockerExecutor } from "../../docker/executor.ts";
import { NATIVE_LAYOUT, resolveLayout } from "../../docker/presets.ts";
import { skip, type CheckResult } from "../../ops/doctor/check.ts";
import { configFamily, type ConfigOutcome } from "../../ops/doctor/config-checks.ts";
import { dataDirFamily } from "../../ops/doctor/data-dir.ts";
import { driveFamily, rcFamily, type DriveProbe } from "../../ops/doctor/drive.ts";
import { mappingFamily } from "../../ops/doctor/mappings.ts";
import { plexFamily } from "../../ops/doctor/plex.ts";
import { portFamily } from "../../ops/doctor/port.ts";
import { runChecks, type CheckFamily, type DoctorReport } from "../../ops/doctor/run-checks.ts";
import { scannerFamily, type ScannerProbe } from "../../ops/doctor/scanner.ts";
import { createDiskProbe, type DiskEntry } from "../../paths/disk-probe.ts";
import { createPathMapper } from "../../paths/mapping.ts";
import { createPlexClient } from "../../plex/client.ts";
import { parseRcUrl } from "../../rclone/rc.ts";
import { BUILT_FEATURES } from "../built-features.ts";
import type { Runtime } from "../runtime.ts";
import { explicitLayout } from "./docker.ts";
import { STAT_TIMEOUT_MS, sharedDiskProbe } from "./queue.ts";

/**
 * Config → the doctor's check families, each given small probes made from the modules the service itself uses (the
 * Plex client, the Docker executor and preset detection, the Drive credentials, the disk probe), so doctor sees what
 * the server would. `autoscan doctor` runs them all; the server runs them at start (`runStartupChecks`) and logs
 * each warning or error once.
 *
 * A further scan target (TARGETS) adds its family in `buildFamilies`, after Plex's.
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
  | { readonly config: Config; readonly outcome: ConfigOutcome }
  | { readonly config?: undefined; readonly outcome: ConfigOutcome };

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
    return { config: loaded.config, outcome: { kind: "loaded", path, warnings } };
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

export function isInContainer(): boolean {
  return existsSync("/.dockerenv") || existsSync("/run/.containerenv");
}

export async function runDoctor(input: DoctorInput, signal?: AbortSignal): Promise<DoctorReport> {
  return runChecks(await buildFamilies(input), signal);
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
      run: async () => [skip("rest", "Other checks", "Skipped until the config is valid (Plex, mappings, scanner, Drive, port).")],
    });
    return families;
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
    }),
  );
  // Further targets (TARGETS) go here: one family each.
  if (scannerMode) families.push(scannerFamily(scannerProbe(config, settings)));
  if (config.CLOUD.ENABLED) families.push(driveFamily(await driveProbe(input, config, startup)));
  if (config.RCLONE.RC_CACHE_REFRESH.ENABLED) families.push(rcFamily(rcProbe(config.RCLONE.RC_CACHE_REFRESH.RC_URL)));
  if (!startup) families.push(portFamily({ ip: config.SERVER_IP, port: config.SERVER_PORT }));
  return families;
}

function scannerProbe(config: Config, settings: Settings): ScannerProbe {
  const explicit = explicitLayout(config);
  if (!config.USE_DOCKER) {
    const layout = { ...NATIVE_LAYOUT, ...explicit };
    return {
      kind: "host",
      usesSudo: config.USE_SUDO,
      async locateScanner() {
        const info = await stat(layout.scanner).catch(() => undefined);
        const runnable = info?.isFile() === true && (await access(layout.scanner, constants.X_OK).then(() => true, () => false));
        if (!runnable) throw new Error(`No runnable Plex Media Scanner at "${layout.scanner}" on this host.`);
        return { path: layout.scanner, user: layout.user, how: explicit.scanner ? "PLEX_SCANNER" : "the Plex package's path" };
      },
      userExists: (user) => hostUserExists(user),
    };
  }
  const container = config.DOCKER_NAME;
  const executor = createDockerExecutor({ dockerHost: settings.dockerHost, clock: systemClock });
  return {
    kind: "docker",
    container,
    endpoint: executor.endpoint,
    ping: () => executor.ping(),
    async inspect() {
      try {
        const info = await executor.inspect(container);
        return { kind: "found", state: info.state, image: info.image };
      } catch (error) {
        if (error instanceof ContainerNotFoundError) return { kind: "missing", running: error.running };
        throw error;
      }
    },
    async locateScanner() {
      const resolved = await resolveLayout({
        preset: config.PLEX_DOCKER_PRESET,
        container,
        explicit,
        fallback: { ...NATIVE_LAYOUT, supportDir: "" },
        probe: executor,
      });
      const found = await executor.stat(container, resolved.layout.scanner);
      if (!found || found.isDirectory) {
        throw new Error(`No Plex Media Scanner at "${resolved.layout.scanner}" in container "${container}" (${resolved.reason}).`);
      }
      return { path: resolved.layout.scanner, user: resolved.layout.user, how: `preset ${resolved.preset}, ${resolved.reason}` };
    },
    async userExists(user) {
      // runc refuses an exec whose User is not in the container's /etc/passwd (exit 126, "unable to find user").
      const result = await executor.exec(container, ["id", "-u"], { user, timeoutMs: 10_000 });
      if (result.exitCode === 0) return true;
      const said = `${result.stdout}${result.stderr}`;
      if (/unable to find user|no matching entries in passwd/i.test(said)) return false;
      return `'id' exited with ${result.exitCode}${said.trim() ? `: ${said.trim().split("\n")[0]}` : ""}`;
    },
  };
}

async function hostUserExists(user: string): Promise<boolean | string> {
  const name = user.split(":")[0] ?? user;
  if (/^\d+$/.test(name)) return true;
  const passwd = await readFile("/etc/passwd", "utf8").catch(() => undefined);
  if (passwd === undefined) return "/etc/passwd cannot be read";
  return passwd.split("\n").some((line) => line.startsWith(`${name}:`));
}

async function driveProbe(input: DoctorInput, config: Config, startup: boolean): Promise<DriveProbe> {
  // The Google clients are large: loaded only when Drive monitoring is on.
  const drive = await import("./drive.ts");
  const { connectDrive } = await import("../../drive/credentials.ts");
  const { loadServiceAccountKey } = await import("../../drive/service-account.ts");
  const mapper = createPathMapper({ mappings: config.SERVER_PATH_MAPPINGS });
  const cloud = config.CLOUD;
  const credentials = () => drive.driveCredentialsFromConfig(config, input.settings, input.log);
  const sharedDrives = cloud.TEAMDRIVE ? cloud.TEAMDRIVES : [];
  return {
    filePaths: cloud.ALLOWED.FILE_PATHS,
    // A watched folder is mapped when it is one of the forms, lies under one, or holds some (`My Drive/Media/` over
    // `My Drive/Media/Movies/` and `My Drive/Media/TV/`).
    isMapped: (path) => mapper.toServer(path).from !== undefined || holdsAForm(config.SERVER_PATH_MAPPINGS, path),
    async credentials() {
      const found = await credentials();
      if (found.kind === "service-account") {
        const key = await loadServiceAccountKey(found.key);
        return `Service account ${key.clientEmail}`;
      }
      if (found.kind === "token") return found.description;
      if (!found.clientId || !found.clientSecret) {
        throw new ConfigError("CLOUD.CLIENT_ID and CLOUD.CLIENT_SECRET are empty (or set CLOUD.SERVICE_ACCOUNT_FILE, or CLOUD.RCLONE_CONFIG and CLOUD.RCLONE_REMOTE).");
      }
      const stored = await found.tokenStore.load();
      if (!stored) throw new ConfigError(`No Google Drive token yet (${found.tokenStore.path}): run 'autoscan authorize'.`);
      if (stored.clientId !== found.clientId) {
        throw new ConfigError(`The stored Google token belongs to OAuth client ${stored.clientId}, not CLOUD.CLIENT_ID: run 'autoscan authorize' again.`);
      }
      return `OAuth client ${found.clientId}, token stored in ${found.tokenStore.path}`;
    },
    ...(startup
      ? {}
      : {
          async connect() {
            const signal = AbortSignal.timeout(20_000);
            const connection = await connectDrive(
              {
                credentials: await credentials(),
                endpoints: drive.googleEndpointsFromEnv(input.env, input.log),
                scopeNeeds: { sharedDrives: sharedDrives.length > 0 },
                clock: systemClock,
                log: input.log,
                retry: { maxAttempts: 1, baseMs: 0, capMs: 0, jitterMs: 0 },
              },
              signal,
            );
            await connection.api.getStartPageToken();
          },
        }),
  };
}

function rcProbe(rcUrl: string) {
  const { endpoint, authorization } = parseRcUrl(rcUrl);
  return {
    url: endpoint,
    async ping() {
      // vfs/list: answered by any rclone serving --rc (and it is the call the cache refresh itself makes first).
      const response = await fetch(new URL("vfs/list", endpoint), {
        method: "POST",
        headers: { "content-type": "application/json", ...(authorization ? { authorization } : {}) },
        body: "{}",
        signal: AbortSignal.timeout(3000),
      });
      await response.body?.cancel();
      if (!response.ok) throw new Error(`it answered ${response.status}${response.status === 401 ? " (check the user and password in RC_URL)" : ""}`);
    },
  };
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

function holdsAForm(mappings: Readonly<Record<string, readonly string[]>>, folder: string): boolean {
  const prefix = withTrailingSlash(normalizePath(folder));
  return Object.entries(mappings).some(([key, forms]) => [key, ...forms].some((form) => normalizePath(form).startsWith(prefix)));
}
