import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { makeTempDir } from "../../test/support/capture-log.ts";
import { defaultConfig } from "./defaults.ts";
import { buildFirstConfig, describeFirstConfig, writeFirstConfig } from "./first-config.ts";
import { loadConfig, parseConfigText } from "./load.ts";

const cleanups: (() => Promise<void>)[] = [];
afterAll(() => Promise.all(cleanups.map((cleanup) => cleanup())));
async function tempDir(): Promise<string> {
  const { dir, cleanup } = await makeTempDir("autoscan-first-config-");
  cleanups.push(cleanup);
  return dir;
}

describe("the first config", () => {
  it("holds only what a user sets, under plex_autoscan's names, in the order they are filled", () => {
    const { config, fromEnvironment } = buildFirstConfig("0123456789abcdef0123456789abcdef", {});
    expect(config).toEqual({
      PLEX_LOCAL_URL: "http://localhost:32400",
      PLEX_TOKEN: "",
      SERVER_PASS: "0123456789abcdef0123456789abcdef",
      SERVER_PATH_MAPPINGS: {},
    });
    expect(Object.keys(config)).toEqual(["PLEX_LOCAL_URL", "PLEX_TOKEN", "SERVER_PASS", "SERVER_PATH_MAPPINGS"]);
    expect(fromEnvironment.size).toBe(0);
  });

  it("leaves out a key a variable sets (Compose's PLEX_LOCAL_URL): a value in the file would be ignored", () => {
    const { config, fromEnvironment } = buildFirstConfig("0123456789abcdef0123456789abcdef", { PLEX_LOCAL_URL: "http://plex:32400" });
    expect(config).not.toHaveProperty("PLEX_LOCAL_URL");
    expect(fromEnvironment.get("PLEX_LOCAL_URL")).toEqual({ variable: "PLEX_LOCAL_URL", value: "http://plex:32400" });
  });

  it("leaves out SERVER_PASS when a variable sets it, and never repeats a secret it did not write", () => {
    const { config, fromEnvironment } = buildFirstConfig("0123456789abcdef0123456789abcdef", { SERVER_PASS: "from-the-env-0123456789" });
    expect(config).not.toHaveProperty("SERVER_PASS");
    expect(fromEnvironment.get("SERVER_PASS")).toEqual({ variable: "SERVER_PASS" });
    expect(describeFirstConfig("/c/config.json", { config, fromEnvironment }, { inContainer: false, firstStart: true })).not.toContain("from-the-env");
  });

  it("counts an empty variable as unset, as the environment overrides do", () => {
    expect(buildFirstConfig("0123456789abcdef0123456789abcdef", { PLEX_LOCAL_URL: "" }).config).toHaveProperty("PLEX_LOCAL_URL");
  });

  it("is written once, mode 0600, with a fresh 32-hex SERVER_PASS, and loads with every other key at its default", async () => {
    const path = join(await tempDir(), "sub", "config.json");
    await writeFirstConfig(path, { PLEX_LOCAL_URL: "http://plex:32400" });
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const text = readFileSync(path, "utf8");
    expect(Object.keys(JSON.parse(text) as object)).toEqual(["PLEX_TOKEN", "SERVER_PASS", "SERVER_PATH_MAPPINGS"]);
    await expect(writeFirstConfig(path, {})).rejects.toThrow(/EEXIST/);
    expect(readFileSync(path, "utf8")).toBe(text);

    const loaded = parseConfigText(text, path, { PLEX_LOCAL_URL: "http://plex:32400" });
    expect(loaded.config.SERVER_PASS).toMatch(/^[0-9a-f]{32}$/);
    expect(loaded.warnings).toEqual([]);
    expect({ ...loaded.config, SERVER_PASS: "" }).toEqual({ ...defaultConfig(), PLEX_LOCAL_URL: "http://plex:32400" });
    expect(loaded.sources.get("PLEX_LOCAL_URL")).toEqual({ kind: "environment", variable: "PLEX_LOCAL_URL" });
    expect(loaded.sources.get("PLEX_TOKEN")).toMatchObject({ kind: "config.json" });
    expect(loaded.sources.get("SERVER_SCAN_DELAY")).toEqual({ kind: "default" });
  });

  it("on first start, loadConfig writes it and says which keys the environment set", async () => {
    const path = join(await tempDir(), "config.json");
    const created = await loadConfig(path, { PLEX_LOCAL_URL: "http://plex:32400" }, true);
    expect(created.kind).toBe("created");
    if (created.kind !== "created") return;
    expect([...created.first.fromEnvironment.keys()]).toEqual(["PLEX_LOCAL_URL"]);
    expect(Object.keys(JSON.parse(readFileSync(path, "utf8")) as object)).toEqual(Object.keys(created.first.config));
  });
});

describe("what the first start says", () => {
  const written = buildFirstConfig("0123456789abcdef0123456789abcdef", { PLEX_LOCAL_URL: "http://plex:32400" });

  it("in a container: each key and what it is for, the one the environment set with its value, docker exec commands", () => {
    const text = describeFirstConfig("/config/config.json", written, { inContainer: true, firstStart: true });
    expect(text).toMatch(/^No config file found\. Created \/config\/config\.json with only what you set yourself:\n/);
    expect(text).toMatch(/^ {2}PLEX_TOKEN +your Plex token/m);
    expect(text).toMatch(/^ {2}SERVER_PATH_MAPPINGS +the paths your \*arr apps send/m);
    expect(text).toMatch(/^ {2}PLEX_LOCAL_URL +set to http:\/\/plex:32400 by the environment variable PLEX_LOCAL_URL \(the compose file and its \.env/m);
    expect(text).toContain("docs/configuration.md");
    expect(text).toContain("'docker compose up -d'");
    expect(text).toContain("'docker exec autoscan autoscan config show'");
    expect(text).not.toContain("0123456789abcdef");
  });

  it("outside a container: plain commands, and no word of Compose when no variable is set", () => {
    const text = describeFirstConfig("/opt/autoscan/config/config.json", buildFirstConfig("x".repeat(32), {}), { inContainer: false, firstStart: true });
    expect(text).toMatch(/^ {2}PLEX_LOCAL_URL +where autoscan reaches Plex/m);
    expect(text).toContain("'autoscan doctor'");
    expect(text).not.toMatch(/compose|docker/i);
    expect(text).toContain("start autoscan again");
  });
});
