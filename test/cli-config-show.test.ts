import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { makeTempDir } from "./support/capture-log.ts";
import { fixtureText } from "./support/config-fixtures.ts";
import { runCli } from "./support/run-cli.ts";

/**
 * Where a value comes from, as a user asks it: `autoscan config show` (and `--json`) through the real entry point,
 * with a value in config.json, one under plex_autoscan's old name, one from the environment (which wins over the
 * file), one from a `KEY_FILE` variable and the defaults; every secret masked. And doctor, blaming a value, says
 * where that value comes from.
 */
const PASS = "c0nf1g5h0wc0nf1g5h0wc0nf1g5h0w00";
const TOKEN = "plex-token-show-0123456789";
const ARR_KEY = "0123456789abcdef0123456789abcdef";
const cleanups: (() => Promise<void>)[] = [];
afterAll(() => Promise.all(cleanups.map((cleanup) => cleanup())));

async function setup(): Promise<{ dir: string; configPath: string }> {
  const { dir, cleanup } = await makeTempDir("autoscan-config-show-");
  cleanups.push(cleanup);
  mkdirSync(join(dir, "data"));
  const configPath = join(dir, "config.json");
  const config = {
    SERVER_PASS: PASS,
    PLEX_TOKEN: TOKEN,
    PLEX_LOCAL_URL: "http://in-the-file:32400",
    DOCKER_FILE_EXIST_PATH_MAPPINGS: { "/mnt/media/": ["/data/"] },
    ARR: { sonarr: { TYPE: "sonarr", URL: "http://sonarr:8989", API_KEY: ARR_KEY } },
  };
  writeFileSync(configPath, JSON.stringify(config, null, 2));
  writeFileSync(join(dir, "db-url"), "postgres://autoscan:db-s3cret-pw@postgres:5432/autoscan\n");
  return { dir, configPath };
}

describe.concurrent("autoscan config show", () => {
  it("prints each key with its value and its source; an environment variable wins over the file; secrets masked", async () => {
    const { dir, configPath } = await setup();
    const result = await runCli(["config", "show", "--config", configPath], {
      env: { PLEX_LOCAL_URL: "http://from-env:32400", SERVER_DATABASE_URL_FILE: join(dir, "db-url") },
    });
    expect(result.code, result.stderr).toBe(0);
    const row = (key: string): string | undefined => result.stdout.split("\n").find((line) => line.startsWith(`${key} `));
    expect(row("PLEX_LOCAL_URL")).toMatch(/^PLEX_LOCAL_URL +environment +http:\/\/from-env:32400$/);
    // The value config.json also holds, shown under it as ignored, aligned with the other values.
    const lines = result.stdout.split("\n");
    const under = lines[lines.indexOf(row("PLEX_LOCAL_URL") ?? "") + 1] ?? "";
    expect(under).toMatch(/^ +↳ config\.json, ignored +http:\/\/in-the-file:32400$/);
    expect(under.indexOf("http://in-the-file")).toBe(row("PLEX_LOCAL_URL")?.indexOf("http://from-env"));
    expect(result.stdout).toContain("config.json also holds PLEX_LOCAL_URL, ignored while the variable is set");
    expect(row("PLEX_TOKEN")).toMatch(/^PLEX_TOKEN +config\.json +<set, 26 characters>$/);
    expect(row("SERVER_FILE_EXIST_PATH_MAPPINGS")).toMatch(/config\.json \(as DOCKER_FILE_EXIST_PATH_MAPPINGS\) +\{"\/mnt\/media\/":\["\/data\/"\]\}$/);
    expect(row("SERVER_SCAN_DELAY")).toMatch(/^SERVER_SCAN_DELAY +default +180$/);
    expect(row("SERVER_DATABASE_URL")).toMatch(/^SERVER_DATABASE_URL +secret file \(SERVER_DATABASE_URL_FILE\) +postgres:\/\/autoscan:\*\*\*@postgres:5432\/autoscan$/);
    expect(row("ARR")).toContain('"API_KEY":"<set, 32 characters>"');
    expect(result.stdout).toContain("Set outside config.json (these win over the file): PLEX_LOCAL_URL, SERVER_DATABASE_URL.");
    expect(result.stdout).toContain("\nNot at their defaults: PLEX_LOCAL_URL, PLEX_TOKEN, SERVER_PASS, SERVER_FILE_EXIST_PATH_MAPPINGS, SERVER_DATABASE_URL, ARR.\n");
    expect(result.stderr).toBe("");
    for (const secret of [PASS, TOKEN, ARR_KEY, "db-s3cret-pw"]) expect(result.stdout + result.stderr).not.toContain(secret);
  });

  it("--json gives each key's value, source (one of four words), whether it changed, and a sentence on where to change it", async () => {
    const { configPath } = await setup();
    const result = await runCli(["config", "show", "--json", "--config", configPath], { env: { PLEX_LOCAL_URL: "http://from-env:32400" } });
    expect(result.code, result.stderr).toBe(0);
    const shown = JSON.parse(result.stdout) as { configFile: string; keys: Record<string, { value: unknown; source: string; detail: string }> };
    expect(shown.configFile).toBe(configPath);
    expect(shown.keys.PLEX_LOCAL_URL).toMatchObject({
      value: "http://from-env:32400",
      source: "environment",
      variable: "PLEX_LOCAL_URL",
      changed: true,
      ignoredFileValue: { value: "http://in-the-file:32400" },
    });
    expect(shown.keys.PLEX_LOCAL_URL?.detail).toMatch(/^PLEX_LOCAL_URL comes from the environment variable PLEX_LOCAL_URL, which wins over config\.json/);
    expect(shown.keys.PLEX_LOCAL_URL?.detail).toMatch(/config\.json also holds PLEX_LOCAL_URL, which is ignored while the variable is set/);
    expect(shown.keys.SERVER_PASS).toEqual({ value: "<set, 32 characters>", source: "config.json", detail: `SERVER_PASS is set in ${configPath}.`, changed: true });
    expect(shown.keys.SERVER_FILE_EXIST_PATH_MAPPINGS).toMatchObject({ source: "config.json", writtenAs: "DOCKER_FILE_EXIST_PATH_MAPPINGS" });
    expect(shown.keys.SERVER_PORT).toMatchObject({ value: 3467, source: "default", changed: false });
    expect(new Set(Object.values(shown.keys).map((key) => key.source))).toEqual(new Set(["environment", "config.json", "default"]));
    expect(result.stdout).not.toContain(PASS);
  });

  it("a secret given as an overriding variable never shows its file value in clear either", async () => {
    const { configPath } = await setup();
    const result = await runCli(["config", "show", "--json", "--config", configPath], { env: { PLEX_TOKEN: "env-token-abcdefghij" } });
    const shown = JSON.parse(result.stdout) as { keys: Record<string, unknown> };
    expect(shown.keys.PLEX_TOKEN).toMatchObject({ value: "<set, 20 characters>", ignoredFileValue: { value: "<set, 26 characters>" } });
    expect(result.stdout).not.toContain(TOKEN);
    expect(result.stdout).not.toContain("env-token-abcdefghij");
  });

  it("a bad config is the same problem list as everywhere (exit 2)", async () => {
    const { configPath } = await setup();
    writeFileSync(configPath, JSON.stringify({ SERVER_PASS: PASS, SERVER_PORT: "many" }));
    const result = await runCli(["config", "show", "--config", configPath]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("SERVER_PORT");
  });
});

describe("config show after the first start, and for a moved-over plex_autoscan file", () => {
  it("labels every key the first config left out as default, and the environment's PLEX_LOCAL_URL with no ignored value", async () => {
    const { dir, cleanup } = await makeTempDir("autoscan-config-show-first-");
    cleanups.push(cleanup);
    const configPath = join(dir, "config.json");
    const env = { PLEX_LOCAL_URL: "http://plex:32400" };
    const first = await runCli(["server", "--config", configPath], { env });
    expect(first.code, first.stderr).toBe(0);
    const result = await runCli(["config", "show", "--config", configPath], { env });
    expect(result.code, result.stderr).toBe(0);
    const rows = result.stdout.split("\n").filter((line) => /^[A-Z_]+ {2}/.test(line) && !line.startsWith("KEY "));
    const from = new Map(rows.map((line) => [line.split(/ {2,}/)[0] ?? "", line.split(/ {2,}/)[1] ?? ""]));
    expect(from.get("PLEX_LOCAL_URL")).toBe("environment");
    expect([...from].filter(([, source]) => source === "config.json").map(([key]) => key)).toEqual(["PLEX_TOKEN", "SERVER_PASS", "SERVER_PATH_MAPPINGS"]);
    expect([...from].filter(([, source]) => source !== "default")).toHaveLength(4);
    expect(from.size).toBeGreaterThan(50);
    expect(result.stdout).not.toContain("ignored");
    expect(result.stdout).toContain("Not at their defaults: PLEX_LOCAL_URL, SERVER_PASS.");
  });

  it("loads a full plex_autoscan config.json unchanged: each of its keys from config.json (old names said), its values kept", async () => {
    const { dir, cleanup } = await makeTempDir("autoscan-config-show-full-");
    cleanups.push(cleanup);
    const configPath = join(dir, "config.json");
    const text = fixtureText("plex-autoscan-full.json");
    writeFileSync(configPath, text);
    const result = await runCli(["config", "show", "--json", "--config", configPath]);
    expect(result.code, result.stderr).toBe(0);
    const { keys } = JSON.parse(result.stdout) as { keys: Record<string, { value: unknown; source: string; writtenAs?: string; changed: boolean }> };
    const file = JSON.parse(text) as Record<string, unknown>;
    expect(keys.CLOUD).toMatchObject({ source: "config.json", writtenAs: "GOOGLE", changed: true });
    for (const key of Object.keys(file).filter((name) => name !== "GOOGLE")) expect(keys[key]?.source, key).toBe("config.json");
    expect(keys.SERVER_PORT?.value).toBe(file.SERVER_PORT);
    expect(keys.SERVER_PATH_MAPPINGS?.value).toEqual(file.SERVER_PATH_MAPPINGS);
    expect(keys.PLEX_LOCAL_URL?.value).toBe(file.PLEX_LOCAL_URL);
    expect(readFileSync(configPath, "utf8")).toBe(text);
  });
});

describe("doctor, blaming a value", () => {
  it("says where it comes from: an environment variable that wins over config.json", async () => {
    const { dir, configPath } = await setup();
    const result = await runCli(["doctor", "--json", "--config", configPath, "--data-dir", join(dir, "data")], {
      env: { PLEX_LOCAL_URL: "http://127.0.0.1:1" },
      timeoutMs: 30_000,
    });
    const report = JSON.parse(result.stdout) as { checks: { id: string; fix: string | null }[] };
    const plex = report.checks.find((check) => check.id === "plex.reach");
    expect(plex?.fix).toMatch(/PLEX_LOCAL_URL comes from the environment variable PLEX_LOCAL_URL, which wins over config\.json/);
  });
});
