import { chmodSync, existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ConfigError } from "../core/errors.ts";
import { makeTempDir } from "../../test/support/capture-log.ts";
import { autoscanPath, fixtureText, leafKeys, readFixture, valueAt } from "../../test/support/config-fixtures.ts";
import { buildDefaultConfig, renderConfig } from "./defaults.ts";
import { parseConfigText } from "./load.ts";
import { upgradeConfigFile } from "./upgrade.ts";

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => ({ dir, cleanup } = await makeTempDir("autoscan-upgrade-")));
afterEach(() => cleanup());

function writeConfig(text: string): string {
  const path = join(dir, "config.json");
  writeFileSync(path, text);
  return path;
}

const readJson = (path: string) => JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;

describe("config upgrade", () => {
  it("adds the keys that are new since a plex_autoscan file was written, with their defaults", async () => {
    const path = writeConfig(fixtureText("plex-autoscan-full.json"));
    const result = await upgradeConfigFile(path);
    const upgraded = readJson(path);
    expect(upgraded.PLEX_SCAN_METHOD).toBe("api");
    expect(upgraded.SERVER_MAX_REQUEST_BYTES).toBe(1_048_576);
    expect(valueAt(upgraded, "CLOUD.SERVICE_ACCOUNT_FILE")).toBe("");
    expect(result.added).toContain('PLEX_SCAN_METHOD: "api"');
    expect(result.added).toContain('CLOUD.SERVICE_ACCOUNT_FILE: ""');
    // Nothing the user had is reported as added.
    expect(result.added.some((line) => line.startsWith("SERVER_PORT:"))).toBe(false);
  });

  it("keeps every value of the user's", async () => {
    const original = readFixture("plex-autoscan-full.json");
    const path = writeConfig(fixtureText("plex-autoscan-full.json"));
    await upgradeConfigFile(path);
    const upgraded = readJson(path);
    for (const [key, value] of leafKeys(original)) expect(valueAt(upgraded, autoscanPath(key)), key).toEqual(value);
  });

  it("produces a file that loads without warnings and with the same meaning", async () => {
    const path = writeConfig(fixtureText("plex-autoscan-full.json"));
    const before = parseConfigText(fixtureText("plex-autoscan-full.json"), path, {}).config;
    await upgradeConfigFile(path);
    const after = parseConfigText(readFileSync(path, "utf8"), path, {});
    expect(after.config).toEqual(before);
    expect(after.warnings).toEqual([]);
  });

  it("keeps the order of the user's keys (a renamed section may move)", async () => {
    const path = writeConfig(fixtureText("plex-autoscan-full.json"));
    await upgradeConfigFile(path);
    const keys = Object.keys(readJson(path));
    const userKeys = Object.keys(readFixture("plex-autoscan-full.json")).filter((k) => k !== "GOOGLE");
    expect(keys.filter((key) => userKeys.includes(key))).toEqual(userKeys);
  });

  it("keeps a backup of the file as it was, byte for byte", async () => {
    const text = fixtureText("plex-autoscan-full.json");
    const path = writeConfig(text);
    const result = await upgradeConfigFile(path);
    expect(result.backup).toBe(`${path}.bak`);
    expect(readFileSync(`${path}.bak`, "utf8")).toBe(text);
  });

  it("keeps the file's permissions (it holds secrets)", async () => {
    const path = writeConfig(fixtureText("plex-autoscan-full.json"));
    chmodSync(path, 0o600);
    await upgradeConfigFile(path);
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it("renames legacy keys to their new names, with their values", async () => {
    const path = writeConfig(fixtureText("l3uddz-legacy.json"));
    const result = await upgradeConfigFile(path);
    const upgraded = readJson(path);
    for (const old of ["GDRIVE", "DOCKER_FILE_EXIST_PATH_MAPPINGS", "PLEX_ANALYZE_FILE_TYPE", "RCLONE_RC_CACHE_EXPIRE"]) {
      expect(upgraded, old).not.toHaveProperty(old);
    }
    expect(upgraded.SERVER_FILE_EXIST_PATH_MAPPINGS).toEqual({ "/home/seed/plexdrive/": ["/data/"] });
    expect(upgraded.PLEX_ANALYZE_TYPE).toBe("deep");
    expect(valueAt(upgraded, "CLOUD.CLIENT_SECRET")).toBe("legacyGdriveSecret987");
    expect(valueAt(upgraded, "CLOUD.ALLOWED.FILE_EXTENSIONS_LIST")).toEqual(["webm", "mkv", "avi", "mp4"]);
    expect(valueAt(upgraded, "RCLONE.RC_CACHE_REFRESH.ENABLED")).toBe(true);
    expect(result.renamed).toEqual(
      expect.arrayContaining([
        "GDRIVE → CLOUD",
        "DOCKER_FILE_EXIST_PATH_MAPPINGS → SERVER_FILE_EXIST_PATH_MAPPINGS",
        "PLEX_ANALYZE_FILE_TYPE → PLEX_ANALYZE_TYPE",
        "RCLONE_RC_CACHE_EXPIRE → RCLONE.RC_CACHE_REFRESH",
      ]),
    );
    // The upgraded file loads without a legacy warning left.
    expect(parseConfigText(readFileSync(path, "utf8"), path, {}).warnings).toEqual([]);
  });

  it("moves RCLONE_RC_CACHE_EXPIRE.FILE_EXISTS_TO_REMOTE_MAPPINGS along with the section", async () => {
    const path = writeConfig(fixtureText("l3uddz-legacy.json"));
    await upgradeConfigFile(path);
    expect(valueAt(readJson(path), "RCLONE.RC_CACHE_REFRESH.FILE_EXISTS_TO_REMOTE_MAPPINGS")).toEqual({
      "Media/": ["/home/seed/plexdrive/Media/"],
    });
  });

  it("adds a random SERVER_PASS to a file that has none (as plex_autoscan's upgrade did)", async () => {
    const path = writeConfig('{\n  "SERVER_PORT": 3468\n}\n');
    await upgradeConfigFile(path);
    const upgraded = readJson(path);
    expect(upgraded.SERVER_PASS).toMatch(/^[0-9a-f]{32}$/);
    expect(upgraded.SERVER_PORT).toBe(3468);
  });

  it("never replaces an existing SERVER_PASS", async () => {
    const path = writeConfig('{\n  "SERVER_PASS": "mine-0123456789abcdef"\n}\n');
    await upgradeConfigFile(path);
    expect(readJson(path).SERVER_PASS).toBe("mine-0123456789abcdef");
  });

  it("leaves an up-to-date file untouched: no write, no backup", async () => {
    const text = renderConfig(buildDefaultConfig("0123456789abcdef0123456789abcdef"));
    const path = writeConfig(text);
    const before = statSync(path).mtimeMs;
    const result = await upgradeConfigFile(path);
    expect(result).toEqual({ added: [], renamed: [], removed: [], backup: undefined });
    expect(readFileSync(path, "utf8")).toBe(text);
    expect(statSync(path).mtimeMs).toBe(before);
    expect(existsSync(`${path}.bak`)).toBe(false);
  });

  it("adds keys missing inside a section the user has, and keeps the section's own values", async () => {
    const path = writeConfig(JSON.stringify({ SERVER_PASS: "0123456789abcdef", RCLONE: { BINARY: "/opt/rclone" } }));
    const result = await upgradeConfigFile(path);
    const upgraded = readJson(path);
    expect(valueAt(upgraded, "RCLONE.BINARY")).toBe("/opt/rclone");
    expect(valueAt(upgraded, "RCLONE.RC_CACHE_REFRESH.RC_URL")).toBe("http://localhost:5572");
    expect(result.added).toContain('RCLONE.CONFIG: ""');
  });

  it("does not add example entries to the user's own mappings or lists", async () => {
    const path = writeConfig(JSON.stringify({ SERVER_PASS: "0123456789abcdef", SERVER_PATH_MAPPINGS: {}, SERVER_IGNORE_LIST: [] }));
    await upgradeConfigFile(path);
    const upgraded = readJson(path);
    expect(upgraded.SERVER_PATH_MAPPINGS).toEqual({});
    expect(upgraded.SERVER_IGNORE_LIST).toEqual([]);
  });

  it("refuses a file that is not valid JSON, naming the line, and does not touch it", async () => {
    const text = '{\n  "SERVER_PASS": "x",\n}\n';
    const path = writeConfig(text);
    await expect(upgradeConfigFile(path)).rejects.toThrow(ConfigError);
    await expect(upgradeConfigFile(path)).rejects.toThrow(/line 3, column 1/);
    expect(readFileSync(path, "utf8")).toBe(text);
    expect(existsSync(`${path}.bak`)).toBe(false);
  });
});
