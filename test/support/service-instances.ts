import { spawn, type ChildProcess } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SCOPE_METADATA_READONLY } from "../../src/drive/scope.ts";
import { createTokenStore } from "../../src/drive/token-store.ts";
import { startFakeGoogle, type FakeGoogle } from "./fake-google.ts";
import { startFakePlex, type FakePlex } from "./fake-plex.ts";
import { freePort } from "./free-port.ts";
import { startRecordingProxy, type RecordingProxy } from "./recording-proxy.ts";
import { childEnv, CLI_MAIN } from "./run-cli.ts";

/**
 * Several real `autoscan server` processes sharing one PostgreSQL database (`SERVER_DATABASE_URL`), as a user runs
 * them behind one address: the same config (same SERVER_PASS, mappings, Plex), each with its own data dir and port,
 * one fake Plex and one media folder (on disk, so file checks pass) shared by all. Each instance reaches the fake
 * Plex (and, with `drive`, the fake Google Drive API) through a front of its own (test/support/recording-proxy.ts):
 * the test knows which instance asked Plex to scan which folder, and when. JSON log lines, kept per instance.
 */
export const INSTANCES_PASS = "mu1t1mu1t1mu1t1mu1t1mu1t1mu1t1aa";
export const DRIVE_CLIENT_ID = "1234567890-multi.apps.googleusercontent.com";
const DRIVE_CLIENT_SECRET = "GOCSPX-multi-secret";

export interface LogLine {
  readonly level: string;
  readonly msg: string;
  readonly [field: string]: unknown;
}

export interface HealthAnswer {
  readonly status?: string;
  readonly store?: string;
  readonly instance?: string;
  readonly roles?: { readonly drive: string; readonly backfill: string };
}

export interface ServiceInstance {
  readonly name: string;
  readonly port: number;
  readonly url: string;
  readonly dataDir: string;
  /** This instance's way to Plex: every request it made, with times. */
  readonly plexFront: RecordingProxy;
  /** This instance's way to the Google Drive API (with `drive`). */
  readonly driveFront: RecordingProxy | undefined;
  /** 1 for the first process, 2 after one restart, … */
  readonly generation: number;
  readonly process: ChildProcess | undefined;
  /** Starts the process (again) and waits until `/health` answers 200. */
  start(): Promise<void>;
  /** SIGKILL: the process dies at once, as on a power cut or a lost node. */
  kill(): Promise<void>;
  /** SIGTERM and waits for the exit (a clean stop). */
  stop(): Promise<void>;
  /** Every JSON log line of every generation, in order. */
  logs(): LogLine[];
  /** The raw stderr of the current process (for failure messages). */
  stderr(): string;
  health(): Promise<HealthAnswer | undefined>;
}

export interface InstancesOptions {
  readonly databaseUrl: string;
  readonly names: readonly string[];
  /** Merged over the shared config (e.g. SERVER_SCAN_DELAY, SERVER_LEASE_SECONDS). */
  readonly config?: Readonly<Record<string, unknown>>;
  /** How long each scan's answer is held back (ms; the fake Plex is that slow for that scan). */
  readonly scanMs?: () => number;
  /** Called synchronously when a scan request from `instance` reaches Plex. */
  readonly onScan?: (instance: ServiceInstance, path: string) => void;
  /** `CLOUD.ENABLED` against one shared fake Google (an empty Drive), polled every `POLL_INTERVAL` s. */
  readonly drive?: { readonly pollSeconds: number };
  /** The command that runs autoscan (default: this Node on src/cli/main.ts). */
  readonly command?: readonly string[];
  /** AUTOSCAN_LOGLEVEL (default INFO). */
  readonly logLevel?: string;
  /** `false`: the log lines are not kept (a bench). */
  readonly keepLogs?: boolean;
  /** Extra environment variables for every instance. */
  readonly env?: Readonly<Record<string, string>>;
  /** Extra environment variables for one instance (e.g. libfaketime's, for a clock of its own). */
  readonly envOf?: (name: string) => Readonly<Record<string, string>>;
}

export interface ServiceInstances {
  readonly dir: string;
  readonly media: string;
  readonly plex: FakePlex;
  readonly google: FakeGoogle | undefined;
  readonly instances: readonly ServiceInstance[];
  byName(name: string): ServiceInstance;
  /** Every scan request Plex got, with the instance (and its generation) that sent it. */
  scans(): { instance: string; generation: number; path: string; at: number }[];
  /** Every Google Drive API call (with `drive`), with the instance that made it. */
  driveCalls(): { instance: string; generation: number; path: string; at: number }[];
  close(): Promise<void>;
}

const SCAN = /^GET \/library\/sections\/[^/]+\/refresh$/;

export async function startServiceInstances(options: InstancesOptions): Promise<ServiceInstances> {
  const dir = await mkdtemp(join(tmpdir(), "autoscan-instances-"));
  const media = join(dir, "media");
  await mkdir(join(media, "TV"), { recursive: true });
  const plex = await startFakePlex({ sections: [{ key: "2", title: "TV Shows", type: "show", locations: ["/data/TV"] }] });
  const google = options.drive ? await startFakeGoogle() : undefined;
  google?.addClient(DRIVE_CLIENT_ID, DRIVE_CLIENT_SECRET);
  const refreshToken = google?.issueRefreshToken(DRIVE_CLIENT_ID, SCOPE_METADATA_READONLY);
  const scanLog: { instance: string; generation: number; path: string; at: number }[] = [];
  const driveLog: { instance: string; generation: number; path: string; at: number }[] = [];
  const instances: ServiceInstance[] = [];
  const shared = {
    SERVER_PASS: INSTANCES_PASS,
    SERVER_IP: "127.0.0.1",
    PLEX_TOKEN: plex.token,
    PLEX_ANALYZE_TYPE: "off",
    SERVER_SCAN_DELAY: 2,
    SERVER_MAX_FILE_CHECKS: 2,
    SERVER_FILE_CHECK_DELAY: 1,
    SERVER_PATH_MAPPINGS: { "/data/TV/": ["/tv/"] },
    SERVER_FILE_EXIST_PATH_MAPPINGS: { [`${media}/`]: ["/data/"] },
    SERVER_DATABASE_URL: options.databaseUrl,
    ...(options.drive
      ? {
          CLOUD: {
            ENABLED: true,
            CLIENT_ID: DRIVE_CLIENT_ID,
            CLIENT_SECRET: DRIVE_CLIENT_SECRET,
            POLL_INTERVAL: options.drive.pollSeconds,
            ALLOWED: { FILE_PATHS: ["My Drive/Media/"] },
          },
        }
      : {}),
    ...options.config,
  };
  try {
    for (const name of options.names) {
      instances.push(await prepareInstance(name));
    }
  } catch (error) {
    await closeAll();
    throw error;
  }

  async function prepareInstance(name: string): Promise<ServiceInstance> {
    const home = join(dir, name);
    const dataDir = join(home, "data");
    await mkdir(dataDir, { recursive: true });
    const port = await freePort();
    // The fronts are made before the instance they serve: they reach it through this.
    const self: { instance?: ServiceInstance } = {};
    let generation = 0;
    const plexFront = await startRecordingProxy(plex.url, {
      holdMs: (request) => (SCAN.test(`${request.method} ${request.path}`) ? (options.scanMs?.() ?? 0) : 0),
      onRequest: (request) => {
        const instance = self.instance;
        if (!SCAN.test(`${request.method} ${request.path}`) || !instance) return;
        const path = request.query.get("path") ?? "";
        scanLog.push({ instance: name, generation, path, at: request.receivedAt });
        options.onScan?.(instance, path);
      },
    });
    const driveFront = google
      ? await startRecordingProxy(google.url, {
          onRequest: (request) => void driveLog.push({ instance: name, generation, path: request.path, at: request.receivedAt }),
        })
      : undefined;
    if (google && refreshToken) {
      // The same token file on every instance (shared, read-only config).
      await createTokenStore({ path: join(dataDir, "google-token.json") }).save({ clientId: DRIVE_CLIENT_ID, refreshToken });
    }
    const config = { ...shared, SERVER_PORT: port, PLEX_LOCAL_URL: plexFront.url };
    await writeFile(join(home, "config.json"), JSON.stringify(config, null, 2));
    const url = `http://127.0.0.1:${String(port)}`;
    let child: ChildProcess | undefined;
    let exited: Promise<void> = Promise.resolve();
    let stderr = "";
    const lines: LogLine[] = [];

    const env = childEnv({
      ...options.env,
      ...options.envOf?.(name),
      AUTOSCAN_DATA_DIR: dataDir,
      AUTOSCAN_LOG_FORMAT: "json",
      AUTOSCAN_LOGLEVEL: options.logLevel ?? "INFO",
      ...(google && driveFront
        ? { AUTOSCAN_GOOGLE_API_URL: driveFront.url, AUTOSCAN_GOOGLE_TOKEN_URL: google.tokenUrl, AUTOSCAN_GOOGLE_AUTH_URL: google.authUrl }
        : {}),
    });
    const command = options.command ?? [process.execPath, CLI_MAIN];

    async function start(): Promise<void> {
      if (child) throw new Error(`instance ${name} is already running`);
      generation += 1;
      stderr = "";
      const [bin = process.execPath, ...args] = command;
      const started = spawn(bin, [...args, "server", "--config", join(home, "config.json"), "--logfile", "none"], {
        env,
        stdio: ["ignore", "pipe", "pipe"],
      });
      child = started;
      let partial = "";
      started.stdout.setEncoding("utf8").on("data", (chunk: string) => {
        if (options.keepLogs === false) return;
        partial += chunk;
        const complete = partial.split("\n");
        partial = complete.pop() ?? "";
        for (const line of complete) {
          if (!line.startsWith("{")) continue;
          try {
            lines.push(JSON.parse(line) as LogLine);
          } catch {
            // a line cut by SIGKILL
          }
        }
      });
      started.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
      exited = new Promise<void>((resolve) =>
        started.once("close", () => {
          if (child === started) child = undefined;
          resolve();
        }),
      );
      const deadline = Date.now() + 60_000;
      for (;;) {
        if (await fetch(`${url}/health`).then((r) => r.ok, () => false)) return;
        if (child !== started) throw new Error(`instance ${name} exited while starting: ${stderr}`);
        if (Date.now() > deadline) {
          started.kill("SIGKILL");
          throw new Error(`instance ${name} did not answer /health within 60 s: ${stderr}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }

    const instance: ServiceInstance = {
      name,
      port,
      url,
      dataDir,
      plexFront,
      driveFront,
      get generation() {
        return generation;
      },
      get process() {
        return child;
      },
      start,
      async kill() {
        child?.kill("SIGKILL");
        await exited;
      },
      async stop() {
        const running = child;
        running?.kill("SIGTERM");
        const late = setTimeout(() => running?.kill("SIGKILL"), 20_000);
        await exited;
        clearTimeout(late);
      },
      logs: () => lines,
      stderr: () => stderr,
      health: () =>
        fetch(`${url}/health`, { signal: AbortSignal.timeout(2_000) }).then(
          (r) => r.json() as Promise<HealthAnswer>,
          () => undefined,
        ),
    };
    self.instance = instance;
    return instance;
  }

  async function closeAll(): Promise<void> {
    await Promise.all(instances.map((instance) => instance.stop()));
    await Promise.all(instances.flatMap((instance) => [instance.plexFront.close(), instance.driveFront?.close()]));
    await plex.close();
    await google?.close();
    await rm(dir, { recursive: true, force: true });
  }

  return {
    dir,
    media,
    plex,
    google,
    instances,
    byName(name) {
      const found = instances.find((instance) => instance.name === name);
      if (!found) throw new Error(`no instance ${name}`);
      return found;
    },
    scans: () => scanLog,
    driveCalls: () => driveLog,
    close: closeAll,
  };
}
