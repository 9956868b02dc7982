import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Readable } from "node:stream";
import { afterAll, describe, expect, it } from "vitest";
import type { CommandIO } from "../src/cli/command.ts";
import { COMMAND_TABLE, loadCommand } from "../src/cli/commands/index.ts";
import { main } from "../src/cli/main.ts";
import { makeTempDir } from "./support/capture-log.ts";
import { EXAMPLE_CONFIG, fixtureText } from "./support/config-fixtures.ts";
import { runCli, type CliOptions } from "./support/run-cli.ts";

// The real CLI in a child process: `node src/cli/main.ts …`. Each test gets a config folder and a separate, empty
// working directory, so a file written to the working directory by mistake is seen.
const VERSION = (JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }).version;
const PASS = "0123456789abcdef0123456789abcdef";

const cleanups: (() => Promise<void>)[] = [];
afterAll(() => Promise.all(cleanups.map((cleanup) => cleanup())));

/** Folders of one test (tests run concurrently: a child process each, mostly waiting on Node's start-up). */
async function setup() {
  const { dir: root, cleanup } = await makeTempDir("autoscan-cli-");
  cleanups.push(cleanup);
  const configDir = join(root, "config");
  const cwd = join(root, "cwd");
  mkdirSync(configDir);
  mkdirSync(cwd);
  const configPath = join(configDir, "config.json");
  return {
    root,
    configDir,
    cwd,
    configPath,
    cli: (args: readonly string[], options: CliOptions = {}) => runCli(args, { cwd, ...options }),
    writeConfig: (value: unknown): void =>
      writeFileSync(configPath, typeof value === "string" ? value : `${JSON.stringify(value, null, 2)}\n`),
  };
}

/** The same `main` in this process, for the many cheap usage checks (the spawned tests prove the real entry point). */
async function inProcess(args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const io: CommandIO = {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    stdin: Readable.from([]),
    env: {},
    installDir: "/nonexistent/autoscan",
    shutdownSignal: new AbortController().signal,
  };
  const code = await main(args, io);
  return { code, stdout, stderr };
}

describe.concurrent("the real entry point", () => {
  it("--version prints the version on stdout and exits 0", async () => {
    expect(await runCli(["--version"])).toMatchObject({ code: 0, stdout: `${VERSION}\n`, stderr: "" });
  });

  it("--help lists every command on stdout (autoscan --help | less) and exits 0", async () => {
    const result = await runCli(["--help"]);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe("");
    expect(result.stdout).toContain("Usage: autoscan <command> [options]");
    for (const command of COMMAND_TABLE) expect(result.stdout).toContain(`  ${command.name} `);
  });

  it("a command's --help prints its usage on stdout and exits 0", async () => {
    const result = await runCli(["config", "check", "--help"]);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe("");
    expect(result.stdout).toMatch(/^Usage: autoscan config check /);
  });

  it("a bare autoscan is bad usage: the command list on stderr, exit 2", async () => {
    const result = await runCli([]);
    expect(result).toMatchObject({ code: 2, stdout: "" });
    expect(result.stderr).toContain("Usage: autoscan <command> [options]");
  });

  it("an unknown command: usage on stderr, exit 2", async () => {
    const result = await runCli(["bogus"]);
    expect(result).toMatchObject({ code: 2, stdout: "" });
    expect(result.stderr).toContain("unknown command 'bogus'");
    expect(result.stderr).toContain("Usage: autoscan <command> [options]");
  });

  it("an unknown flag: the command's usage on stderr, exit 2", async () => {
    const result = await runCli(["config", "check", "--bogus"]);
    expect(result).toMatchObject({ code: 2, stdout: "" });
    expect(result.stderr).toContain("Unknown option '--bogus'");
    expect(result.stderr).toContain("Usage: autoscan config check [");
  });
});

describe("--version / --help (in process)", () => {
  it.each([["--version"], ["-v"], ["-V"]])("%s prints the version on stdout", async (flag) => {
    expect(await inProcess([flag])).toEqual({ code: 0, stdout: `${VERSION}\n`, stderr: "" });
  });

  it.each([["--help"], ["-h"], ["help"]])("%s lists every command and every settings flag on stdout", async (flag) => {
    const result = await inProcess([flag]);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe("");
    for (const command of COMMAND_TABLE) expect(result.stdout).toContain(`  ${command.name} `);
    for (const name of ["--config", "--logfile", "--queuefile", "--cachefile", "--loglevel", "--data-dir", "--log-format", "--version"]) {
      expect(result.stdout).toContain(name);
    }
  });

  it("a bare autoscan prints the same list on stderr and exits 2", async () => {
    const bare = await inProcess([]);
    expect(bare).toEqual({ code: 2, stdout: "", stderr: (await inProcess(["--help"])).stdout });
  });

  it.each(COMMAND_TABLE.map((entry) => [entry.name, entry] as const))("autoscan %s --help", async (name, entry) => {
    const command = await loadCommand(entry);
    for (const args of [[...name.split(" "), "--help"], [...name.split(" "), "-h"], ["help", ...name.split(" ")], ["--help", ...name.split(" ")]]) {
      const result = await inProcess(args);
      expect(result.code).toBe(0);
      expect(result.stderr).toBe("");
      expect(result.stdout.startsWith(`Usage: ${command.usage}\n`)).toBe(true);
      expect(result.stdout).toContain(command.summary);
      expect(result.stdout).toContain("--config");
      for (const flagName of Object.keys(command.options ?? {})) expect(result.stdout).toContain(`--${flagName}`);
    }
  });
});

describe("bad usage: usage on stderr, exit 2 (in process)", () => {
  it.each([
    [["bogus"], /unknown command 'bogus'/],
    [["config"], /unknown command 'config'/],
    [["config", "bogus"], /unknown command 'config bogus'/],
    [["--bogus"], /unknown command '--bogus'/],
    [["help", "bogus"], /unknown command 'bogus'/],
    [["help", "config", "check", "extra"], /unknown command 'config check extra'/],
  ])("autoscan %j", async (args, message) => {
    const result = await inProcess(args);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(message);
    expect(result.stderr).toContain("Usage: autoscan <command> [options]");
  });

  it.each([
    [["server", "--conifg", "/x.json"], "server", /Unknown option '--conifg'/],
    [["config", "check", "extra"], "config check", /extra/],
    [["config", "check", "--config"], "config check", /--config/],
    [["config", "init", "--loglevel", "LOUD"], "config init", /Unknown log level "LOUD"/],
    [["config", "upgrade", "--log-format", "xml"], "config upgrade", /Unknown log format "xml"/],
  ])("autoscan %j", async (args, name, message) => {
    const result = await inProcess(args);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(message);
    expect(result.stderr).toContain(`Usage: autoscan ${name} [`);
  });
});

describe.concurrent("first start without a config file", () => {
  it("writes the short first config with a fresh SERVER_PASS, says where and what to edit, exits 0", async () => {
    const { cli, configPath, configDir, cwd } = await setup();
    const result = await cli(["server", "--config", configPath]);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain(configPath);
    expect(result.stderr).toMatch(/^ {2}PLEX_TOKEN /m);
    expect(result.stderr).toMatch(/^ {2}SERVER_PATH_MAPPINGS /m);
    expect(result.stderr).toContain("docs/configuration.md");
    expect(result.stderr).toMatch(/'(docker exec autoscan )?autoscan config show'/);
    const written = readFileSync(configPath, "utf8");
    const pass = (JSON.parse(written) as { SERVER_PASS: string }).SERVER_PASS;
    expect(pass).toMatch(/^[0-9a-f]{32}$/);
    expect(written).toBe(readFileSync(EXAMPLE_CONFIG, "utf8").replace('"change-me-to-a-long-random-secret"', `"${pass}"`));
    // Nothing else was written, neither beside the config nor in the working directory.
    expect(readdirSync(configDir)).toEqual(["config.json"]);
    expect(readdirSync(cwd)).toEqual([]);
  });

  it("with PLEX_LOCAL_URL in the environment (Compose's .env), leaves it out of the file and says where it comes from", async () => {
    const { cli, configPath } = await setup();
    const result = await cli(["server", "--config", configPath], { env: { PLEX_LOCAL_URL: "http://plex:32400" } });
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/^ {2}PLEX_LOCAL_URL +set to http:\/\/plex:32400 by the environment variable PLEX_LOCAL_URL/m);
    expect(Object.keys(JSON.parse(readFileSync(configPath, "utf8")) as object)).toEqual(["PLEX_TOKEN", "SERVER_PASS", "SERVER_PATH_MAPPINGS"]);
  });

  it("finds the config through AUTOSCAN_CONFIG before PLEX_AUTOSCAN_CONFIG", async () => {
    const { cli, configPath, root } = await setup();
    const result = await cli(["server"], { env: { AUTOSCAN_CONFIG: configPath, PLEX_AUTOSCAN_CONFIG: join(root, "no.json") } });
    expect(result.code).toBe(0);
    expect(existsSync(configPath)).toBe(true);
    expect(existsSync(join(root, "no.json"))).toBe(false);
  });

  it("expands $VAR in PLEX_AUTOSCAN_CONFIG", async () => {
    const { cli, root } = await setup();
    const result = await cli(["config", "init"], { env: { CFG: join(root, "theirs"), PLEX_AUTOSCAN_CONFIG: "$CFG/config.json" } });
    expect(result.code).toBe(0);
    expect(existsSync(join(root, "theirs", "config.json"))).toBe(true);
  });
});

describe.concurrent("autoscan config init", () => {
  it("writes the short first config, prints its path on stdout, and refuses to overwrite it the second time", async () => {
    const { cli, configPath } = await setup();
    const first = await cli(["config", "init", "--config", configPath]);
    expect(first.code).toBe(0);
    expect(first.stdout).toBe(`${configPath}\n`);
    expect(first.stderr).toMatch(/^Wrote .* with only what you set yourself:\n/);
    const written = readFileSync(configPath, "utf8");
    expect(Object.keys(JSON.parse(written) as object)).toEqual(["PLEX_LOCAL_URL", "PLEX_TOKEN", "SERVER_PASS", "SERVER_PATH_MAPPINGS"]);
    expect(JSON.parse(written)).toHaveProperty("SERVER_PASS", expect.stringMatching(/^[0-9a-f]{32}$/));

    const second = await cli(["config", "init", "--config", configPath]);
    expect(second.code).not.toBe(0);
    expect(second.stdout).toBe("");
    expect(second.stderr).toContain("already exists");
    expect(second.stderr).toContain("config upgrade");
    expect(readFileSync(configPath, "utf8")).toBe(written);
  });
});

describe.concurrent("autoscan config check", () => {
  it("prints a summary of a plex_autoscan user's file on stdout and exits 0; warnings go to stderr", async () => {
    const { cli, configPath, configDir, writeConfig } = await setup();
    writeConfig(fixtureText("plex-autoscan-full.json"));
    const result = await cli(["config", "check", "--config", configPath]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`Config file:     ${configPath}`);
    expect(result.stdout).toContain(`Data directory:  ${configDir}`);
    expect(result.stdout).toContain(`Queue file:      ${join(configDir, "queue.db")}`);
    expect(result.stdout).toContain("http://127.0.0.1:3468/<SERVER_PASS>");
    expect(result.stdout).toContain("https://plex.example.com:32400");
    expect(result.stdout).toContain("/mnt/unionfs/");
    expect(result.stdout).not.toContain("warning");
    expect(result.stderr).toContain(`${configPath} is valid`);
    // The summary never shows the secrets themselves.
    for (const secret of ["9c4b81fe234e4d6eb9011cefe514d915", "plexTokenFullFixture123", "GOCSPX-clientsecret-full-fixture"]) {
      expect(result.stdout + result.stderr).not.toContain(secret);
    }
  });

  it("warns on stderr about legacy keys, naming what replaced them, and still exits 0", async () => {
    const { cli, configPath, writeConfig } = await setup();
    writeConfig(fixtureText("l3uddz-legacy.json"));
    const result = await cli(["config", "check", "--config", configPath]);
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/warning: .*"DOCKER_FILE_EXIST_PATH_MAPPINGS".*"SERVER_FILE_EXIST_PATH_MAPPINGS"/);
    expect(result.stderr).toMatch(/warning: .*"PLEX_SECTION_PATH_MAPPINGS" is obsolete/);
    // The fix, once, after the warnings: the command that rewrites them.
    expect(result.stderr).toMatch(/warning: [^\n]*\nRun 'autoscan config upgrade' to rename or drop the legacy keys above \('--dry-run' shows it first\)\.\n[^\n]* is valid/);
    expect(result.stdout).not.toContain("warning");
  });

  it("lists every problem on stderr and exits 2", async () => {
    const { cli, configPath, writeConfig } = await setup();
    writeConfig({ SERVER_PASS: PASS, SERVER_PATH_MAPPING: {}, SERVER_PORT: "3468", CLOUD: { ALLOWED: { FILE_PATH: [] } } });
    const result = await cli(["config", "check", "--config", configPath]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain(`${configPath} has 3 problems:`);
    expect(result.stderr).toContain('  - Unknown key "SERVER_PATH_MAPPING" — did you mean "SERVER_PATH_MAPPINGS"?');
    expect(result.stderr).toContain('  - Unknown key "FILE_PATH" in "CLOUD.ALLOWED" — did you mean "FILE_PATHS"?');
    expect(result.stderr).toContain('  - SERVER_PORT: expected a whole number (no quotes), found "3468".');
  });

  it("reports invalid JSON with its line and column, exit 2", async () => {
    const { cli, configPath, writeConfig } = await setup();
    writeConfig('{\n  "SERVER_PASS": "x",\n  "SERVER_PORT": 3468,\n}\n');
    const result = await cli(["config", "check", "--config", configPath]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("line 4, column 1");
  });

  it("exits 2 without creating anything when the file is missing", async () => {
    const { cli, configPath } = await setup();
    const result = await cli(["config", "check", "--config", configPath]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("autoscan config init");
    expect(existsSync(configPath)).toBe(false);
  });

  it("applies environment overrides", async () => {
    const { cli, configPath, writeConfig } = await setup();
    writeConfig({ SERVER_PASS: PASS });
    const result = await cli(["config", "check", "--config", configPath], { env: { SERVER_PORT: "4000", USE_DOCKER: "true" } });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("http://0.0.0.0:4000/<SERVER_PASS>");
    expect(result.stdout).toContain("container 'plex'");
  });

  it("names the environment variable whose value is wrong, exit 2", async () => {
    const { cli, configPath, writeConfig } = await setup();
    writeConfig({ SERVER_PASS: PASS });
    const result = await cli(["config", "check", "--config", configPath], { env: { SERVER_PORT: "abc" } });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("SERVER_PORT (from environment variable SERVER_PORT)");
  });

  it("puts data files flag > AUTOSCAN_* > PLEX_AUTOSCAN_* > the config's folder, never the working directory", async () => {
    const { cli, configPath, configDir, cwd, writeConfig } = await setup();
    writeConfig({ SERVER_PASS: PASS });
    const env = { AUTOSCAN_QUEUEFILE: "ours.db", PLEX_AUTOSCAN_QUEUEFILE: "theirs.db" };
    const queueLine = async (args: string[], vars: Record<string, string>): Promise<string> => {
      const result = await cli(["config", "check", "--config", configPath, ...args], { env: vars });
      expect(result.code).toBe(0);
      return /Queue file:\s+(.*)/.exec(result.stdout)?.[1] ?? "";
    };
    const [flag, ours, none] = await Promise.all([queueLine(["--queuefile", "flag.db"], env), queueLine([], env), queueLine([], {})]);
    expect(flag).toBe(join(configDir, "flag.db"));
    expect(ours).toBe(join(configDir, "ours.db"));
    expect(none).toBe(join(configDir, "queue.db"));
    expect(readdirSync(cwd)).toEqual([]);
  });
});

describe.concurrent("autoscan config upgrade", () => {
  it("renames legacy keys with their values, keeps a .bak, prints what changed on stdout, writes no defaults", async () => {
    const { cli, configPath, writeConfig } = await setup();
    const original = fixtureText("l3uddz-legacy.json");
    writeConfig(original);
    const result = await cli(["config", "upgrade", "--config", configPath]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("Renamed GDRIVE → CLOUD (value kept)\n");
    expect(result.stdout).toContain("Renamed DOCKER_FILE_EXIST_PATH_MAPPINGS → SERVER_FILE_EXIST_PATH_MAPPINGS (value kept)\n");
    // Keys left out keep their defaults: one line says so, none is written.
    expect(result.stdout).toMatch(/^\d+ other keys keep their defaults \(not in your file, not written\): 'autoscan config show' lists them/m);
    expect(result.stdout).not.toContain("Added");
    expect(result.stderr).toBe(`Your config was upgraded: ${configPath} (backup: ${configPath}.bak).\nRestart autoscan to apply it (docker restart autoscan, or systemctl restart autoscan).\n`);
    expect(readFileSync(`${configPath}.bak`, "utf8")).toBe(original);
    const upgraded = JSON.parse(readFileSync(configPath, "utf8")) as Record<string, unknown>;
    expect(upgraded.SERVER_FILE_EXIST_PATH_MAPPINGS).toEqual({ "/home/seed/plexdrive/": ["/data/"] });
    expect(upgraded.SERVER_PASS).toBe("3f2a6c1d9b8e4f70a5c6d7e8f9012345");
    expect(upgraded.PLEX_TOKEN).toBe("legacyPlexToken456");
    expect(upgraded).not.toHaveProperty("PLEX_SCAN_METHOD");
  });

  it("names each key it drops on a line of its own, with why (they are only in the .bak afterwards)", async () => {
    const { cli, configPath, writeConfig } = await setup();
    writeConfig(fixtureText("l3uddz-legacy.json"));
    const result = await cli(["config", "upgrade", "--config", configPath]);
    expect(result.code).toBe(0);
    const dropped = result.stdout.split("\n").filter((line) => line.startsWith("Dropped "));
    expect(dropped).toEqual([
      "Dropped GDRIVE.IGNORE_PATHS: obsolete in autoscan (list the wanted paths in CLOUD.ALLOWED.FILE_PATHS)",
      "Dropped USE_QUOTED_SCAN_DIRECTORY: obsolete in autoscan (paths always reach the scanner intact now)",
      "Dropped PLEX_SECTION_PATH_MAPPINGS: obsolete in autoscan (sections come from Plex itself now; `autoscan sections` lists them)",
      "Dropped SERVER_USE_SQLITE: obsolete in autoscan (the queue is always durable now)",
    ]);
    const upgraded = readFileSync(configPath, "utf8");
    for (const key of ["PLEX_SECTION_PATH_MAPPINGS", "USE_QUOTED_SCAN_DIRECTORY", "IGNORE_PATHS", "SERVER_USE_SQLITE"]) expect(upgraded).not.toContain(`"${key}"`);
  });

  it("lists each new section the file could add, one line each with what it does and where it is documented, and writes none", async () => {
    const { cli, configPath, writeConfig } = await setup();
    writeConfig({ SERVER_PASS: PASS, ARR: { sonarr: { TYPE: "sonarr", URL: "http://sonarr:8989", API_KEY: "0123456789abcdef0123456789abcdef" } } });
    const result = await cli(["config", "upgrade", "--config", configPath]);
    expect(result.code).toBe(0);
    const lines = result.stdout.split("\n");
    const header = lines.findIndex((line) => line.startsWith("Sections new in autoscan that your file could add (shown, never written"));
    expect(header, result.stdout).toBeGreaterThanOrEqual(0);
    const sections = lines.slice(header + 1).filter((line) => line !== "");
    expect(sections.map((line) => line.trim().split(/\s+/)[0])).toEqual(["TARGETS", "NOTIFY", "WATCH", "SERVER_ANCHORS", "SERVER_DATABASE_URL"]);
    for (const line of sections) expect(line).toMatch(/^ {2}[A-Z_]+ +\S.* \(docs\/[a-z-]+\.md#[a-z-]+\)$/);
    expect(result.stdout).toMatch(/^ {2}WATCH +.*\(docs\/operations\.md#watching-library-folders\)$/m);
    expect(result.stderr).toContain("is up to date; nothing to change");
    expect(existsSync(`${configPath}.bak`)).toBe(false);
  });

  it("--dry-run says what it would change and writes nothing", async () => {
    const { cli, configPath, writeConfig } = await setup();
    const original = fixtureText("l3uddz-legacy.json");
    writeConfig(original);
    const result = await cli(["config", "upgrade", "--dry-run", "--config", configPath]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("Would rename GDRIVE → CLOUD (value kept)\n");
    expect(result.stdout).toContain("Would drop PLEX_SECTION_PATH_MAPPINGS: obsolete in autoscan");
    expect(result.stderr).toBe(`Nothing was written (--dry-run). Run 'autoscan config upgrade' to apply it to ${configPath}.\n`);
    expect(readFileSync(configPath, "utf8")).toBe(original);
    expect(existsSync(`${configPath}.bak`)).toBe(false);
  });

  it("changes nothing in an up-to-date file and says so", async () => {
    const { cli, configPath } = await setup();
    const init = await cli(["config", "init", "--config", configPath]);
    expect(init.code).toBe(0);
    const before = readFileSync(configPath, "utf8");
    const result = await cli(["config", "upgrade", "--config", configPath]);
    expect(result.code).toBe(0);
    expect(result.stdout).not.toMatch(/^(Renamed|Dropped|Changed|Added) /m);
    expect(result.stderr).toContain("up to date");
    expect(readFileSync(configPath, "utf8")).toBe(before);
    expect(existsSync(`${configPath}.bak`)).toBe(false);
  });

  it("keeps what it does not know, lists it as a problem to fix by hand, and exits 2 (the server would refuse the file)", async () => {
    const { cli, configPath, writeConfig } = await setup();
    writeConfig({ SERVER_PASS: PASS, SERVER_PATH_MAPPING: { "/mnt/": ["/data/"] }, USE_QUOTED_SCAN_DIRECTORY: true });
    const result = await cli(["config", "upgrade", "--config", configPath]);
    expect(result.code).toBe(2);
    expect(result.stdout).toContain("Dropped USE_QUOTED_SCAN_DIRECTORY: obsolete in autoscan");
    expect(result.stderr).toBe(
      `Your config was upgraded: ${configPath} (backup: ${configPath}.bak).\n` +
        "The file still has 1 problem to fix by hand (an upgrade keeps what it does not know; 'autoscan config check' lists them too):\n" +
        '  - Unknown key "SERVER_PATH_MAPPING" — did you mean "SERVER_PATH_MAPPINGS"?\n' +
        "Once fixed, restart autoscan to apply it (docker restart autoscan, or systemctl restart autoscan).\n",
    );
    expect(JSON.parse(readFileSync(configPath, "utf8"))).toHaveProperty("SERVER_PATH_MAPPING", { "/mnt/": ["/data/"] });
  });

  it("exits 2 on invalid JSON and leaves the file alone", async () => {
    const { cli, configPath, writeConfig } = await setup();
    writeConfig('{\n  "SERVER_PASS": "x"\n  "SERVER_PORT": 1\n}\n');
    const result = await cli(["config", "upgrade", "--config", configPath]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("line 3, column 3");
    expect(existsSync(`${configPath}.bak`)).toBe(false);
  });
});

describe.concurrent("autoscan server with a bad config", () => {
  it("lists the problems and exits 2 before listening", async () => {
    const { cli, configPath, cwd, writeConfig } = await setup();
    writeConfig({ SERVER_PASS: PASS, SERVER_PATH_MAPPING: {} });
    const result = await cli(["server", "--config", configPath]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('Unknown key "SERVER_PATH_MAPPING" — did you mean "SERVER_PATH_MAPPINGS"?');
    expect(readdirSync(cwd)).toEqual([]);
  });
});
