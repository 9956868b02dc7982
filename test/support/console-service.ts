import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startFakePlex, type FakePlex, type FakeSection } from "./fake-plex.ts";
import { freePort } from "./free-port.ts";
import { startCli, within, type RunningCli } from "./run-cli.ts";

/**
 * The real service for the console's tests: `autoscan server` as a child process with a real queue file, real HTTP
 * and a fake Plex at the edge, and a media folder on disk (`/data/TV` and `/data/Movies` in Plex's form, found under
 * `<dir>/media` by autoscan).
 */
export const CONSOLE_PASS = "c0n5013c0n5013c0n5013c0n5013aa11";

export interface ConsoleService {
  readonly dir: string;
  readonly media: string;
  readonly plex: FakePlex;
  readonly url: string;
  /** `http://127.0.0.1:<port>/<pass>` */
  readonly base: string;
  readonly child: RunningCli;
  /** Creates a file under the media folder (a path relative to it, e.g. `TV/Show/Season 01/x.mkv`). */
  addFile(relative: string): Promise<void>;
  webhook(label: string, body: unknown): Promise<Response>;
  /** SIGKILL: the process dies at once, mid-write or mid-scan, as on a power cut. */
  kill(): Promise<void>;
  /** Starts the service again on the same config and data (after `kill`). */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export const CONSOLE_SECTIONS: readonly FakeSection[] = [
  { key: "1", title: "Movies", type: "movie", locations: ["/data/Movies"] },
  { key: "2", title: "TV Shows", type: "show", locations: ["/data/TV"] },
];

export interface ConsoleServiceOptions {
  /** Runs before the service starts, with its data folder (`AUTOSCAN_DATA_DIR`, created): e.g. seeds the queue file. */
  readonly seed?: (dataDir: string) => Promise<void>;
  /** The fake Plex's scans read the media folder (its library holds what is on disk), as Plex's scanner does. */
  readonly plexReadsDisk?: boolean;
}

export async function startConsoleService(extra: Record<string, unknown> = {}, options: ConsoleServiceOptions = {}): Promise<ConsoleService> {
  const dir = await mkdtemp(join(tmpdir(), "autoscan-console-"));
  const media = join(dir, "media");
  await mkdir(join(media, "TV"), { recursive: true });
  await mkdir(join(media, "Movies"), { recursive: true });
  await mkdir(join(dir, "data"), { recursive: true });
  await options.seed?.(join(dir, "data"));
  const toLocal = (path: string): string | undefined => (path.startsWith("/data/") ? join(media, path.slice("/data/".length)) : undefined);
  const plex = await startFakePlex({ sections: [...CONSOLE_SECTIONS], ...(options.plexReadsDisk ? { toLocal } : {}) });
  const port = await freePort();
  const config = {
    SERVER_PASS: CONSOLE_PASS,
    SERVER_PORT: port,
    SERVER_IP: "127.0.0.1",
    SERVER_ALLOW_MANUAL_SCAN: true,
    PLEX_LOCAL_URL: plex.url,
    PLEX_TOKEN: plex.token,
    PLEX_ANALYZE_TYPE: "off",
    SERVER_SCAN_DELAY: 1,
    SERVER_MAX_FILE_CHECKS: 2,
    SERVER_FILE_CHECK_DELAY: 1,
    SERVER_PATH_MAPPINGS: { "/data/TV/": ["/tv/"], "/data/Movies/": ["/movies/"] },
    SERVER_FILE_EXIST_PATH_MAPPINGS: { [`${media}/`]: ["/data/"] },
    ...extra,
  };
  await writeFile(join(dir, "config.json"), JSON.stringify(config, null, 2));
  const url = `http://127.0.0.1:${port}`;
  const launch = async (): Promise<RunningCli> => {
    const started = startCli(["server", "--config", join(dir, "config.json"), "--logfile", "none"], {
      timeoutMs: 300_000,
      env: { AUTOSCAN_DATA_DIR: join(dir, "data") },
    });
    try {
      await within(
        (async () => {
          while (!(await fetch(`${url}/health`).then((r) => r.ok, () => false))) await new Promise((resolve) => setTimeout(resolve, 100));
        })(),
        30_000,
        `server health (stderr: ${started.stderr()})`,
      );
    } catch (error) {
      started.process.kill("SIGKILL");
      throw error;
    }
    return started;
  };
  let child: RunningCli;
  try {
    child = await launch();
  } catch (error) {
    await plex.close();
    throw error;
  }
  return {
    dir,
    media,
    plex,
    url,
    base: `${url}/${CONSOLE_PASS}`,
    get child() {
      return child;
    },
    async addFile(relative) {
      const path = join(media, relative);
      await mkdir(join(path, ".."), { recursive: true });
      await writeFile(path, "x");
    },
    webhook: (label, body) =>
      fetch(`${url}/${CONSOLE_PASS}/${label}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) }),
    async kill() {
      child.process.kill("SIGKILL");
      await child.exited;
    },
    async restart() {
      child = await launch();
    },
    async stop() {
      child.process.kill("SIGTERM");
      await Promise.race([child.exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
      child.process.kill("SIGKILL");
      await plex.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
