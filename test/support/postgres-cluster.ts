import { execFileSync, spawn } from "node:child_process";
import { accessSync, chownSync, constants, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { appendFile, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./free-port.ts";

/**
 * A throwaway PostgreSQL cluster from the machine's own binaries (Debian's `postgresql` package:
 * /usr/lib/postgresql/<major>/bin, or the folder named by AUTOSCAN_PG_BIN): initdb into a fresh temp dir, pg_ctl start
 * on 127.0.0.1 and a free port, trust authentication for the `postgres` role. PostgreSQL refuses to run as root, so
 * under root the server runs as the `postgres` OS user. Server settings are PostgreSQL's defaults (fsync and
 * synchronous_commit on: what users run), except the connection limit. No vitest here: the test run's globalSetup
 * and `npm run bench` both use it.
 */
export type PostgresBin =
  | { readonly ok: true; readonly bin: string; readonly major: number }
  | { readonly ok: false; readonly reason: string };

export interface PostgresCluster {
  /** `postgres://postgres@127.0.0.1:<port>/postgres`: the superuser, on the maintenance database. */
  readonly url: string;
  readonly port: number;
  /** Major version of the binaries (15 for Debian bookworm). */
  readonly major: number;
  /** The temp dir holding the data dir (`data/`), the unix socket and the server log (`server.log`). */
  readonly dir: string;
  /**
   * Takes the server down (immediate shutdown: clients lose their connections, new ones are refused) and keeps the
   * data, for "the database is gone for a while" tests on a cluster of the test's own; `resume()` brings it back on
   * the same port.
   */
  pause(): Promise<void>;
  resume(): Promise<void>;
  /** Immediate shutdown, then the temp dir is removed. Safe to call twice. */
  stop(): Promise<void>;
}

export interface StartOptions {
  /** Extra `name = value` server settings, appended to postgresql.conf. */
  readonly settings?: Readonly<Record<string, string | number>>;
  /** When this process dies without calling stop() (a killed test run), a small watchdog stops the server. Default true. */
  readonly watchdog?: boolean;
}

const DEBIAN_ROOT = "/usr/lib/postgresql";

/** The highest installed PostgreSQL's bin folder, or why there is none. */
export function findPostgresBin(env: NodeJS.ProcessEnv = process.env): PostgresBin {
  const chosen = env.AUTOSCAN_PG_BIN;
  if (chosen) {
    if (!hasTools(chosen)) return { ok: false, reason: `no initdb and pg_ctl in ${chosen} (AUTOSCAN_PG_BIN)` };
    return { ok: true, bin: chosen, major: majorOf(chosen) };
  }
  const majors = existsSync(DEBIAN_ROOT)
    ? readdirSync(DEBIAN_ROOT)
        .filter((name) => /^\d+$/.test(name))
        .map(Number)
        .sort((a, b) => b - a)
    : [];
  for (const major of majors) {
    const bin = join(DEBIAN_ROOT, String(major), "bin");
    if (hasTools(bin)) return { ok: true, bin, major };
  }
  return {
    ok: false,
    reason: `PostgreSQL is not installed (no ${DEBIAN_ROOT}/<version>/bin/initdb). Install it: apt-get install postgresql`,
  };
}

function hasTools(bin: string): boolean {
  try {
    for (const tool of ["initdb", "pg_ctl", "postgres"]) accessSync(join(bin, tool), constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The major version from `postgres --version` ("postgres (PostgreSQL) 15.18 (Debian …)"); 0 when unreadable. */
function majorOf(bin: string): number {
  const match = /^\/usr\/lib\/postgresql\/(\d+)\/bin\/?$/.exec(bin);
  if (match) return Number(match[1]);
  try {
    const out = execFileSync(join(bin, "postgres"), ["--version"], { encoding: "utf8" });
    return Number(/\(PostgreSQL\) (\d+)/.exec(out)?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/** Who runs the server: the current user, or under root the `postgres` OS user (uid/gid from /etc/passwd). */
type RunAs = { readonly ok: true; readonly uid?: number; readonly gid?: number } | { readonly ok: false; readonly reason: string };

function runAs(): RunAs {
  if (process.getuid?.() !== 0) return { ok: true };
  let passwd = "";
  try {
    passwd = readFileSync("/etc/passwd", "utf8");
  } catch {
    // handled below
  }
  const line = passwd.split("\n").find((entry) => entry.startsWith("postgres:"));
  const [, , uid, gid] = line?.split(":") ?? [];
  if (!uid || !gid) {
    return {
      ok: false,
      reason: "running as root, and there is no `postgres` OS user to run the server as (PostgreSQL refuses root). Install Debian's postgresql package, which creates it",
    };
  }
  return { ok: true, uid: Number(uid), gid: Number(gid) };
}

/** Runs a PostgreSQL tool (as `user`), resolving with its output; rejects with the output when it exits non-zero. */
function run(user: RunAs & { ok: true }, command: string, args: string[], cwd: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd,
      uid: user.uid,
      gid: user.gid,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: cwd, LC_ALL: "C", LANG: "C", TZ: "UTC" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.once("error", reject);
    child.once("close", (code) =>
      code === 0 ? resolve(output) : reject(new Error(`${command} ${args.join(" ")} exited with ${code}: ${output.trim()}`)),
    );
  });
}

/**
 * Starts a fresh cluster. Rejects (with the server log's tail) when it cannot; the temp dir is then already removed.
 * The caller must call stop().
 */
export async function startPostgresCluster(found: PostgresBin & { ok: true }, options: StartOptions = {}): Promise<PostgresCluster> {
  const user = runAs();
  if (!user.ok) throw new Error(user.reason);
  const dir = mkdtempSync(join(tmpdir(), "autoscan-pg-"));
  if (user.uid !== undefined && user.gid !== undefined) chownSync(dir, user.uid, user.gid);
  const data = join(dir, "data");
  const log = join(dir, "server.log");
  const pgCtl = join(found.bin, "pg_ctl");
  let watchdog: number | undefined;
  let stopped = false;

  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    if (watchdog !== undefined) {
      try {
        process.kill(-watchdog, "SIGKILL");
      } catch {
        // already gone
      }
    }
    if (existsSync(join(data, "postmaster.pid"))) {
      await run(user, pgCtl, ["-D", data, "-m", "immediate", "-w", "-t", "20", "stop"], dir).catch(() => killPostmaster(data));
    }
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    await run(
      user,
      join(found.bin, "initdb"),
      ["-D", data, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions"],
      dir,
    );
    const settings: Record<string, string | number> = {
      listen_addresses: "'127.0.0.1'",
      unix_socket_directories: `'${dir}'`,
      // Three service instances, each with its pools and lock connections, per test file; files run in parallel.
      max_connections: 300,
      ...options.settings,
    };
    await appendFile(
      join(data, "postgresql.conf"),
      `\n# autoscan test cluster\n${Object.entries(settings).map(([key, value]) => `${key} = ${value}`).join("\n")}\n`,
    );
    // The port is free a moment before the server binds it: on a lost race, another port.
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      try {
        await run(user, pgCtl, ["-D", data, "-l", log, "-o", `-p ${port}`, "-w", "-t", "60", "start"], dir);
      } catch (error) {
        const serverLog = await readFile(log, "utf8").catch(() => "");
        if (attempt < 5 && /could not bind|Address already in use/.test(serverLog)) continue;
        throw new Error(`${String(error)}\nserver log (${log}):\n${serverLog.split("\n").slice(-15).join("\n")}`);
      }
      if (options.watchdog !== false) watchdog = startWatchdog(data, dir);
      const pause = async (): Promise<void> => {
        await run(user, pgCtl, ["-D", data, "-m", "immediate", "-w", "-t", "20", "stop"], dir);
      };
      const resume = async (): Promise<void> => {
        await run(user, pgCtl, ["-D", data, "-l", log, "-o", `-p ${port}`, "-w", "-t", "60", "start"], dir);
      };
      return { url: `postgres://postgres@127.0.0.1:${port}/postgres`, port, major: found.major, dir, pause, resume, stop };
    }
  } catch (error) {
    await stop();
    throw error;
  }
}

/** SIGKILL for a postmaster that pg_ctl could not stop (its children exit when they notice it gone). */
function killPostmaster(data: string): void {
  try {
    const pid = Number(readFileSync(join(data, "postmaster.pid"), "utf8").split("\n")[0]);
    if (pid > 0) process.kill(pid, "SIGKILL");
  } catch {
    // no server
  }
}

/**
 * A detached shell that waits for this process to end and then shuts the server down (SIGQUIT to the postmaster:
 * PostgreSQL's immediate shutdown) and removes the temp dir: a test run killed before its teardown leaves nothing.
 */
function startWatchdog(data: string, dir: string): number | undefined {
  const script =
    'while kill -0 "$1" 2>/dev/null; do sleep 1; done; ' +
    'pid=$(head -n 1 "$2/postmaster.pid" 2>/dev/null) && kill -QUIT "$pid" 2>/dev/null; ' +
    'for i in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done; rm -rf "$3"';
  const child = spawn("sh", ["-c", script, "autoscan-pg-watchdog", String(process.pid), data, dir], {
    detached: true,
    stdio: "ignore",
  });
  child.unref();
  return child.pid;
}
