import { spawn } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../free-port.ts";
import { CLI_MAIN, childEnv, type RunningCli } from "../run-cli.ts";

/**
 * The real `autoscan server` as a child process, for the fault suites: its config lives outside the data directory
 * under test (`AUTOSCAN_DATA_DIR`), so only the queue (and, unless moved, the log file) is on the faulty disk.
 *
 * Requests are Sonarr `Download` webhooks, one folder each (`<media>/show-<n>/Season 01`), so "delivered" can be read
 * per request: the folder is pending (or done) in the queue, or scanned by the fake Plex.
 */
export const PASS = "0f1e2d3c4b5a69788796a5b4c3d2e1f0";
const OUTPUT_KEPT = 1024 * 1024;
export const COMPILE_CACHE = join(tmpdir(), "autoscan-faults-compile-cache");
const PLEX_TOKEN = "faultSuitePlexToken0123";

export interface ServerSetup {
  /** The data directory (`AUTOSCAN_DATA_DIR`): the queue, the lock, and by default the log file. */
  readonly dataDir: string;
  /** Where config.json goes (never on the faulty disk). */
  readonly configDir: string;
  /** Folder the Sonarr series paths live under (the Plex section's location in end-to-end cases). */
  readonly mediaRoot: string;
  /** Fake Plex URL; without it Plex points at a closed port (nothing is ever due anyway: see `scanDelaySeconds`). */
  readonly plexUrl?: string;
  readonly plexToken?: string;
  /** SERVER_SCAN_DELAY (default 3600: nothing leaves the queue during a test). */
  readonly scanDelaySeconds?: number;
  /** Put the log file here instead of the data directory ("none" for no log file). */
  readonly logFile?: string;
  /** Run under `bash -c 'ulimit -f <blocks>; exec node …'` (1 KiB blocks). */
  readonly fileSizeLimitKiB?: number;
  readonly extraConfig?: Record<string, unknown>;
  /** Extra environment (e.g. AUTOSCAN_LOGLEVEL). */
  readonly env?: Readonly<Record<string, string>>;
  /** A command the server runs under, e.g. `["unshare", "--pid", "--fork"]` (a PID namespace of its own). */
  readonly wrapper?: readonly string[];
}

export interface AutoscanServer {
  readonly port: number;
  readonly base: string;
  readonly cli: RunningCli;
  readonly pid: number;
  /** stdout + stderr so far (the last MiB of it). */
  output(): string;
  /** From now on, counts the output lines that match `pattern`. */
  countLines(pattern: RegExp): () => number;
  /** True once the process has exited (`how` says how). */
  exited(): boolean;
  how(): { code: number | null; signal: NodeJS.Signals | null } | undefined;
  kill9(): Promise<void>;
  /** SIGTERM and wait (up to 15 s, then SIGKILL). */
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export function writeConfig(setup: ServerSetup, port: number): string {
  mkdirSync(setup.configDir, { recursive: true });
  const path = join(setup.configDir, "config.json");
  const config = {
    SERVER_PASS: PASS,
    SERVER_IP: "127.0.0.1",
    SERVER_PORT: port,
    PLEX_LOCAL_URL: setup.plexUrl ?? "http://127.0.0.1:9",
    PLEX_TOKEN: setup.plexToken ?? PLEX_TOKEN,
    PLEX_CHECK_BEFORE_SCAN: false,
    PLEX_WAIT_FOR_EXTERNAL_SCANNERS: false,
    PLEX_ANALYZE_TYPE: "off",
    PLEX_DATABASE_PATH: "",
    PLEX_TIMEOUT: 5,
    SERVER_SCAN_DELAY: setup.scanDelaySeconds ?? 3600,
    SERVER_FILE_CHECK_DELAY: 1,
    SERVER_MAX_FILE_CHECKS: 5,
    SERVER_PATH_MAPPINGS: {},
    SERVER_IGNORE_LIST: [],
    ...setup.extraConfig,
  };
  writeFileSync(path, `${JSON.stringify(config, null, 2)}\n`);
  return path;
}

/** Starts `autoscan server` on a free port and waits until GET /health answers 200 (or throws with its output). */
export async function startServer(
  setup: ServerSetup,
  options: { waitHealthy?: boolean; onSpawn?: (server: AutoscanServer) => void } = {},
): Promise<AutoscanServer> {
  const port = await freePort();
  const configPath = writeConfig(setup, port);
  const env = childEnv({
    // Dozens of starts per run: Node's compile cache saves a quarter of each one's CPU (it changes nothing else).
    NODE_COMPILE_CACHE: COMPILE_CACHE,
    AUTOSCAN_DATA_DIR: setup.dataDir,
    ...(setup.logFile ? { AUTOSCAN_LOGFILE: setup.logFile } : {}),
    ...setup.env,
  });
  const nodeArgs = [CLI_MAIN, "server", "--config", configPath];
  const [wrapper, ...wrapperArgs] = setup.wrapper ?? [];
  const child =
    wrapper !== undefined
      ? spawn(wrapper, [...wrapperArgs, process.execPath, ...nodeArgs], { env, stdio: ["ignore", "pipe", "pipe"] })
      : setup.fileSizeLimitKiB === undefined
      ? spawn(process.execPath, nodeArgs, { env, stdio: ["ignore", "pipe", "pipe"] })
      : spawn(
          "bash",
          ["-c", 'ulimit -f "$1"; shift; exec "$@"', "ulimit", String(setup.fileSizeLimitKiB), process.execPath, ...nodeArgs],
          { env, stdio: ["ignore", "pipe", "pipe"] },
        );
  // Output kept bounded (a server that floods its log must not slow the test down): the last MiB.
  let out = "";
  let cut = 0;
  const counters: { pattern: RegExp; count: number }[] = [];
  let partial = "";
  const keep = (chunk: string): void => {
    if (counters.length > 0) {
      const lines = (partial + chunk).split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines) for (const counter of counters) if (counter.pattern.test(line)) counter.count++;
    }
    out += chunk;
    if (out.length > 2 * OUTPUT_KEPT) {
      cut += out.length - OUTPUT_KEPT;
      out = out.slice(-OUTPUT_KEPT);
    }
  };
  child.stdout.setEncoding("utf8").on("data", keep);
  child.stderr.setEncoding("utf8").on("data", keep);
  let how: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once("close", (code, signal) => resolve((how = { code, signal })));
  });
  const cli: RunningCli = { process: child, stdout: () => out, stderr: () => "", exited };
  const base = `http://127.0.0.1:${String(port)}`;
  const server: AutoscanServer = {
    port,
    base,
    cli,
    pid: child.pid ?? -1,
    output: () => (cut > 0 ? `[${String(cut)} characters of output dropped]\n${out}` : out),
    countLines(pattern) {
      const counter = { pattern, count: 0 };
      counters.push(counter);
      return () => counter.count;
    },
    exited: () => how !== undefined,
    how: () => how,
    async kill9() {
      if (!how) child.kill("SIGKILL");
      await exited;
    },
    async stop() {
      if (how) return how;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
      const result = await exited;
      clearTimeout(timer);
      return result;
    },
  };
  // Known to the caller before the wait, so that a start that never becomes healthy is still killed at cleanup.
  options.onSpawn?.(server);
  if (options.waitHealthy !== false) {
    await eventually(
      async () => {
        if (how) throw new FatalWait(`the server exited (${JSON.stringify(how)}) before it was healthy:\n${out}`);
        return (await health(server)).status === 200;
      },
      { timeoutMs: 30_000, what: `GET /health = 200 on ${base}`, output: () => `${out}\n${describeThreads(child.pid)}` },
    );
  }
  return server;
}

/** Where each thread of a process waits (Linux): what a hung start is stuck on. */
export function describeThreads(pid: number | undefined): string {
  if (pid === undefined) return "";
  try {
    const tasks = readdirSync(`/proc/${String(pid)}/task`);
    const lines = tasks.map((task) => {
      const at = (name: string): string => {
        try {
          return readFileSync(`/proc/${String(pid)}/task/${task}/${name}`, "utf8").trim();
        } catch {
          return "?";
        }
      };
      return `  ${task} ${at("comm")} ${at("wchan")}`;
    });
    return `threads of ${String(pid)}:\n${lines.join("\n")}`;
  } catch {
    return "";
  }
}

/** Thrown from an `eventually` check to stop waiting at once. */
export class FatalWait extends Error {}

/** Polls `check` until it returns true (every 100 ms, up to `timeoutMs`): the generous "eventually" of these suites. */
export async function eventually(
  check: () => Promise<boolean> | boolean,
  options: { timeoutMs?: number; what: string; output?: () => string; intervalMs?: number },
): Promise<void> {
  const deadline = Date.now() + (options.timeoutMs ?? 15_000);
  let last: unknown;
  for (;;) {
    try {
      if (await check()) return;
      last = undefined;
    } catch (error) {
      if (error instanceof FatalWait) throw error;
      last = error;
    }
    if (Date.now() > deadline) {
      const tail = options.output ? `\n--- output (last 4000 chars) ---\n${options.output().slice(-4000)}` : "";
      throw new Error(`not within ${String(options.timeoutMs ?? 15_000)} ms: ${options.what}${last ? ` (last error: ${String(last)})` : ""}${tail}`);
    }
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 100));
  }
}

export interface Health {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

export async function health(server: Pick<AutoscanServer, "base">, timeoutMs = 3_000): Promise<Health> {
  const response = await fetch(`${server.base}/health`, { signal: AbortSignal.timeout(timeoutMs) });
  const text = await response.text();
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    body = { text };
  }
  return { status: response.status, body };
}

/** The folder request `n` asks to scan. */
export function folderOf(mediaRoot: string, n: number): string {
  return `${mediaRoot}/show-${String(n)}/Season 01`;
}

/** The episode file of request `n` (the file check looks for it in end-to-end cases). */
export function fileOf(mediaRoot: string, n: number): string {
  return `${folderOf(mediaRoot, n)}/Show ${String(n)} - S01E01.mkv`;
}

/** A Sonarr v3 `Download` webhook for request `n`; `padding` makes its queue record bigger (a longer title). */
export function sonarrDownload(mediaRoot: string, n: number, padding = 0): Record<string, unknown> {
  return {
    eventType: "Download",
    series: { id: n, title: `Show ${String(n)}${" x".repeat(padding)}`, path: `${mediaRoot}/show-${String(n)}`, tvdbId: 1000 + n, type: "standard" },
    episodes: [{ id: n, episodeNumber: 1, seasonNumber: 1, title: "Pilot", seriesId: n }],
    episodeFile: { id: n, relativePath: `Season 01/Show ${String(n)} - S01E01.mkv`, quality: "WEBDL-1080p", size: 1 },
    isUpgrade: false,
  };
}

/** What became of one request: a status, or no answer at all (the connection failed: the outcome is unknown). */
export type Outcome = { readonly n: number; readonly status: number; readonly body: string } | { readonly n: number; readonly status: "none"; readonly error: string };

export async function sendScan(server: Pick<AutoscanServer, "base">, mediaRoot: string, n: number, options: { padding?: number; timeoutMs?: number } = {}): Promise<Outcome> {
  try {
    const response = await fetch(`${server.base}/${PASS}`, {
      method: "POST",
      headers: { "content-type": "application/json", "user-agent": "Sonarr/4.0.0.0" },
      body: JSON.stringify(sonarrDownload(mediaRoot, n, options.padding ?? 0)),
      signal: AbortSignal.timeout(options.timeoutMs ?? 45_000),
    });
    return { n, status: response.status, body: await response.text() };
  } catch (error) {
    return { n, status: "none", error: String((error as Error).cause ?? error) };
  }
}

/** A manual scan of one path as a form post (kind unknown: resolved by a stat of the disk before it is queued). */
export async function sendManual(server: Pick<AutoscanServer, "base">, path: string, timeoutMs = 45_000): Promise<Outcome> {
  try {
    const response = await fetch(`${server.base}/${PASS}`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ eventType: "Manual", filepath: path }).toString(),
      signal: AbortSignal.timeout(timeoutMs),
    });
    return { n: -1, status: response.status, body: await response.text() };
  } catch (error) {
    return { n: -1, status: "none", error: String((error as Error).cause ?? error) };
  }
}

interface QueueView {
  readonly folder: string;
  readonly state?: string;
}

/** The folders pending in the running server's queue (the API lists up to 1000). */
export async function pendingFolders(server: Pick<AutoscanServer, "base">): Promise<string[]> {
  const response = await fetch(`${server.base}/api/${PASS}?cmd=queue`, { signal: AbortSignal.timeout(5_000) });
  const body = (await response.json()) as { success: boolean; queue?: QueueView[] };
  if (!body.success || !body.queue) throw new Error(`cmd=queue answered ${JSON.stringify(body).slice(0, 300)}`);
  return body.queue.map((item) => item.folder);
}

/**
 * The ledger of one fault case: what every request was answered. After recovery, `check` compares it with what the
 * queue holds: every 2xx delivered, every refusal not, nothing twice.
 */
export class Ledger {
  readonly acked = new Set<number>();
  readonly refused = new Map<number, string>();
  /** Requests with no answer (the process died while they were in flight): either outcome is allowed. */
  readonly unknown = new Set<number>();
  readonly statuses = new Map<string, number>();
  private next = 0;

  take(): number {
    return this.next++;
  }

  record(outcome: Outcome): Outcome {
    const key = String(outcome.status);
    this.statuses.set(key, (this.statuses.get(key) ?? 0) + 1);
    if (outcome.status === "none") this.unknown.add(outcome.n);
    else if (outcome.status >= 200 && outcome.status < 300) this.acked.add(outcome.n);
    else this.refused.set(outcome.n, `${String(outcome.status)} ${outcome.body.slice(0, 200)}`);
    return outcome;
  }

  /** Problems found comparing the ledger with the delivered folders (empty: the promise held). */
  problems(mediaRoot: string, delivered: readonly string[]): string[] {
    const problems: string[] = [];
    const counts = new Map<string, number>();
    for (const folder of delivered) counts.set(folder, (counts.get(folder) ?? 0) + 1);
    for (const n of this.acked) {
      const count = counts.get(folderOf(mediaRoot, n)) ?? 0;
      if (count === 0) problems.push(`request ${String(n)} was answered 2xx but is lost`);
      if (count > 1) problems.push(`request ${String(n)} was delivered ${String(count)} times`);
    }
    for (const [n, answer] of this.refused) {
      if (counts.has(folderOf(mediaRoot, n))) problems.push(`request ${String(n)} was refused (${answer}) but delivered`);
    }
    for (const n of this.unknown) {
      if ((counts.get(folderOf(mediaRoot, n)) ?? 0) > 1) problems.push(`request ${String(n)} (no answer) was delivered twice`);
    }
    return problems;
  }
}
