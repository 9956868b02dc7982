import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import type Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CommandIO } from "../src/cli/command.ts";
import { main } from "../src/cli/main.ts";
import {
  absentContainerName,
  createContainerPool,
  describeDocker,
  ensureFakePlexImage,
  probeEngine,
  readFakeScannerCalls,
  setFakeScannerControl,
  type ContainerPool,
} from "./support/docker/engine.ts";
import { installHostFakeScanner, readHostCalls } from "./support/docker/host-fake-scanner.ts";
import { createLibraryDir } from "./support/docker/library-dir.ts";

/** Runs `autoscan <args>` through the CLI's main with this config, capturing both streams. */
async function autoscan(dir: string, args: string[], config: Record<string, unknown>) {
  const path = join(dir, "config.json");
  await writeFile(path, JSON.stringify({ SERVER_PASS: "0123456789abcdef", ...config }, null, 2));
  let stdout = "";
  let stderr = "";
  const io: CommandIO = {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    stdin: Readable.from([]),
    env: { DOCKER_HOST: process.env.DOCKER_HOST },
    installDir: dir,
    shutdownSignal: new AbortController().signal,
  };
  const code = await main([...args, "--config", path, "--loglevel", "error"], io);
  return { code, stdout, stderr };
}

// Typed with macOS's decomposed "é" (NFD) and shell-hostile characters: it must reach the scanner unchanged.
const SEASON = `It's "Caf\u0065\u0301" $HOME \`id\` (2020) [x]/Season 01`;

describe("autoscan scan on this host (USE_DOCKER false)", () => {
  let dir: string;
  let fake: { scanner: string; state: string };
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "autoscan-scan-cli-"));
    fake = await installHostFakeScanner(join(dir, "plex media server"));
  });
  afterAll(async () => rm(dir, { recursive: true, force: true }));

  // plex_autoscan's configs carry the scanner path escaped for `bash -c`.
  const escaped = () => fake.scanner.replace(/ /g, "\\ ");

  it("runs the scanner without a shell, streams its output and exits with its code", async () => {
    const config = { PLEX_SCANNER: escaped(), USE_SUDO: false, SERVER_PATH_MAPPINGS: { "/data/TV/": ["/mnt/unionfs/TV/"] } };
    const result = await autoscan(dir, ["scan", "--directory", `/mnt/unionfs/TV/${SEASON}/`, "--section", "2"], config);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`Scanning /data/TV/${SEASON}\n`);
    expect(result.stderr).toContain("The '--scan' operation is deprecated");
    const calls = await readHostCalls(fake.state);
    expect(calls.at(-1)?.argv).toEqual(["--scan", "--refresh", "--section", "2", "--directory", `/data/TV/${SEASON}`]);

    await writeFile(join(fake.state, "control.json"), JSON.stringify({ exit: 3, stderr: "Scanner crashed" }));
    const failed = await autoscan(dir, ["scan", "-d", "/data/Movies/Heat (1995)", "-c", "1"], config);
    await rm(join(fake.state, "control.json"));
    expect(failed.code).toBe(3);
    expect(failed.stderr).toContain("Scanner crashed\n");
  });

  it("lists sections through the scanner's --list when no PLEX_TOKEN is set", async () => {
    await rm(join(fake.state, "control.json"), { force: true });
    // No library database next to the fake: Plex SQLite fails, so the names come from --list.
    const result = await autoscan(dir, ["sections"], { PLEX_SCANNER: escaped(), USE_SUDO: false, PLEX_DATABASE_PATH: join(dir, "none.db") });
    expect(result.stderr).toContain("PLEX_TOKEN is empty: asking Plex Media Scanner on this host instead.");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("Plex Sections:\n==============\n  1: Movies\n");
    expect(result.stdout).toContain("  2: TV Shows\n");
    const calls = await readHostCalls(fake.state);
    expect(calls.some((call) => call.argv.includes("--list"))).toBe(true);
  });

  it("prints exactly what would run with --dry-run, and runs nothing", async () => {
    const before = (await readHostCalls(fake.state)).length;
    const result = await autoscan(dir, ["scan", "--directory", "/data/Movies/Heat (1995)", "--section", "1", "--dry-run"], {
      PLEX_SCANNER: escaped(),
      USE_SUDO: true,
      PLEX_USER: "plex",
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("Would run in this host:");
    expect(result.stdout).toContain(
      `  argv:   ${JSON.stringify([
        "sudo", "-n", "-u", "plex", "--", "/usr/bin/env",
        "LD_LIBRARY_PATH=/usr/lib/plexmediaserver/lib",
        "PLEX_MEDIA_SERVER_APPLICATION_SUPPORT_DIR=/var/lib/plexmediaserver/Library/Application Support",
        fake.scanner, "--scan", "--refresh", "--section", "1", "--directory", "/data/Movies/Heat (1995)",
      ])}`,
    );
    expect((await readHostCalls(fake.state)).length).toBe(before);
  });

  it("says what is wrong with the command line (exit 2)", async () => {
    expect((await autoscan(dir, ["scan"], {})).code).toBe(2);
    const bad = await autoscan(dir, ["scan", "--directory", "/x", "--section", "Movies"], {});
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--section expects a section number");
  });

  it("exits 127 and names the path it tried when the scanner is not there", async () => {
    const result = await autoscan(dir, ["scan", "--directory", "/data/x", "--section", "1"], {
      PLEX_SCANNER: "/nowhere/Plex\\ Media\\ Scanner",
      USE_SUDO: false,
    });
    expect(result.code).toBe(127);
    expect(result.stderr).toContain('Could not run "/nowhere/Plex Media Scanner" (this host, user plex, exit 127');
  });
});

const engine = await probeEngine();

describeDocker("autoscan scan in the Plex container (real engine)", engine, (docker: Docker) => {
  let pool: ContainerPool;
  let root: string;
  let hotio: string;
  beforeAll(async () => {
    const images = await ensureFakePlexImage(docker);
    pool = createContainerPool(docker, "scan-cli");
    root = await mkdtemp(join(tmpdir(), "autoscan-scan-docker-"));
    await chmod(root, 0o755);
    hotio = (await pool.start(images.hotio, { binds: [`${await createLibraryDir(root, "")}:/config`] })).name;
  });
  afterAll(async () => {
    await pool?.removeAll();
    if (root) await rm(root, { recursive: true, force: true });
  });

  const base = () => ({ USE_DOCKER: true, DOCKER_NAME: hotio, SERVER_PATH_MAPPINGS: { "/data/TV/": ["/mnt/unionfs/TV/"] } });

  it("finds the section from the path, maps the folder, and execs the scanner byte for byte", async () => {
    const result = await autoscan(root, ["scan", "--directory", `/mnt/unionfs/TV/${SEASON}`], base());
    expect(result.code).toBe(0);
    const scans = (await readFakeScannerCalls(docker, hotio)).filter((call) => call.argv.includes("--scan"));
    expect(scans.at(-1)).toMatchObject({
      argv: ["--scan", "--refresh", "--section", "2", "--directory", `/data/TV/${SEASON}`],
      user: "hotio",
    });
    expect(result.stdout).toContain(`Scanning /data/TV/${SEASON}\n`);
  });

  it("--dry-run prints the container, user, env and argv", async () => {
    const result = await autoscan(root, ["scan", "--directory", "/data/Movies/Heat (1995)", "--dry-run"], base());
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`Would run in container "${hotio}" (Docker exec via `);
    expect(result.stdout).toContain("  user:   hotio\n");
    expect(result.stdout).toContain('LD_LIBRARY_PATH="/app/bin/usr/lib/plexmediaserver/lib"');
    expect(result.stdout).toContain('PLEX_MEDIA_SERVER_APPLICATION_SUPPORT_DIR="/app/config"');
    expect(result.stdout).toContain(
      `  argv:   ${JSON.stringify(["/app/bin/usr/lib/plexmediaserver/Plex Media Scanner", "--scan", "--refresh", "--section", "1", "--directory", "/data/Movies/Heat (1995)"])}`,
    );
  });

  it("exits with the scanner's code, and 1 with the sections listed when no section holds the folder", async () => {
    await setFakeScannerControl(docker, hotio, { exit: 4 });
    const failed = await autoscan(root, ["scan", "--directory", "/data/Movies/Heat (1995)"], base());
    await setFakeScannerControl(docker, hotio, {});
    expect(failed.code).toBe(4);

    const nowhere = await autoscan(root, ["scan", "--directory", "/srv/other/x"], base());
    expect(nowhere.code).toBe(1);
    expect(nowhere.stderr).toContain("Unable to map '/srv/other/x' to a Section ID.");
    expect(nowhere.stderr).toContain("  2: TV Shows (/data/TV)");
  });

  it("names DOCKER_NAME when the container does not exist (exit 1)", async () => {
    const missing = absentContainerName();
    const result = await autoscan(root, ["scan", "--directory", "/data/x", "--section", "1"], {
      ...base(),
      DOCKER_NAME: missing,
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`No container named "${missing}" (DOCKER_NAME). Running containers: `);
    expect(result.stderr).toContain(hotio);
  });
});
