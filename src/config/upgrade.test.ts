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
  it("writes no defaults for the keys that are new since a plex_autoscan file was written: it lists them", async () => {
    const path = writeConfig(fixtureText("plex-autoscan-full.json"));
    const result = await upgradeConfigFile(path);
    const upgraded = readJson(path);
    // They keep their defaults in code, as in the short file a first start writes.
    expect(upgraded).not.toHaveProperty("PLEX_SCAN_METHOD");
    expect(valueAt(upgraded, "CLOUD.SERVICE_ACCOUNT_FILE")).toBeUndefined();
    expect(result.defaulted).toEqual(expect.arrayContaining(["PLEX_SCAN_METHOD", "SERVER_MAX_REQUEST_BYTES", "CLOUD.SERVICE_ACCOUNT_FILE"]));
    // Nothing the user had is listed, nor a section of its own (those are listed as new sections).
    expect(result.defaulted).not.toContain("SERVER_PORT");
    expect(result.defaulted).not.toContain("WATCH");
    expect(result.added).toEqual([]);
  });

  it("keeps every value of the user's, but for the obsolete keys it names as dropped", async () => {
    const original = readFixture("plex-autoscan-full.json");
    const path = writeConfig(fixtureText("plex-autoscan-full.json"));
    const result = await upgradeConfigFile(path);
    const upgraded = readJson(path);
    const dropped = result.dropped.map((entry) => entry.key);
    expect(dropped).toEqual(["SERVER_USE_SQLITE"]);
    for (const [key, value] of leafKeys(original)) {
      if (dropped.includes(key)) expect(upgraded, key).not.toHaveProperty(key);
      else expect(valueAt(upgraded, autoscanPath(key)), key).toEqual(value);
    }
  });

  it("produces a file that loads without warnings and with the same meaning", async () => {
    const path = writeConfig(fixtureText("plex-autoscan-full.json"));
    // SERVER_USE_SQLITE is read and ignored (the queue is always durable): dropping it changes nothing.
    const { SERVER_USE_SQLITE: _ignored, ...before } = parseConfigText(fixtureText("plex-autoscan-full.json"), path, {}).config;
    await upgradeConfigFile(path);
    const after = parseConfigText(readFileSync(path, "utf8"), path, {});
    const { SERVER_USE_SQLITE: _default, ...afterConfig } = after.config;
    expect(afterConfig).toEqual(before);
    expect(after.warnings).toEqual([]);
  });

  it("keeps the order of the user's keys (a renamed section may move; a dropped key goes)", async () => {
    const path = writeConfig(fixtureText("plex-autoscan-full.json"));
    await upgradeConfigFile(path);
    const keys = Object.keys(readJson(path));
    const userKeys = Object.keys(readFixture("plex-autoscan-full.json")).filter((k) => k !== "GOOGLE" && k !== "SERVER_USE_SQLITE");
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
        "GDRIVE.ALLOW_PATHS → CLOUD.ALLOWED.FILE_PATHS",
        "GDRIVE.SCAN_EXTENSIONS → CLOUD.ALLOWED.FILE_EXTENSIONS_LIST",
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

  it("adds no SERVER_PASS when a variable sets it (a value in the file would be ignored)", async () => {
    const path = writeConfig('{\n  "SERVER_PORT": 3468\n}\n');
    const result = await upgradeConfigFile(path, { env: { SERVER_PASS: "from-the-environment-0123" } });
    expect(result).toMatchObject({ added: [], written: false });
    expect(readJson(path)).not.toHaveProperty("SERVER_PASS");
  });

  it("never replaces an existing SERVER_PASS", async () => {
    const path = writeConfig('{\n  "SERVER_PASS": "mine-0123456789abcdef"\n}\n');
    await upgradeConfigFile(path);
    expect(readJson(path).SERVER_PASS).toBe("mine-0123456789abcdef");
  });

  it.each([
    ["a short file like the first start writes", { PLEX_LOCAL_URL: "http://plex:32400", PLEX_TOKEN: "", SERVER_PASS: "0123456789abcdef0123456789abcdef", SERVER_PATH_MAPPINGS: {} }],
    ["a file with every key", buildDefaultConfig("0123456789abcdef0123456789abcdef")],
  ])("leaves an up-to-date file untouched: no write, no backup (%s)", async (_name, config) => {
    const text = renderConfig(config);
    const path = writeConfig(text);
    const before = statSync(path).mtimeMs;
    const result = await upgradeConfigFile(path);
    expect(result).toMatchObject({ added: [], renamed: [], dropped: [], changed: [], written: false, backup: undefined });
    expect(readFileSync(path, "utf8")).toBe(text);
    expect(statSync(path).mtimeMs).toBe(before);
    expect(existsSync(`${path}.bak`)).toBe(false);
  });

  it("keeps a section's own values and lists the keys it leaves out of it, without writing them", async () => {
    const text = JSON.stringify({ SERVER_PASS: "0123456789abcdef", RCLONE: { BINARY: "/opt/rclone" } });
    const path = writeConfig(text);
    const result = await upgradeConfigFile(path);
    expect(readFileSync(path, "utf8")).toBe(text);
    expect(result.defaulted).toEqual(expect.arrayContaining(["RCLONE.CONFIG", "RCLONE.RC_CACHE_REFRESH"]));
    expect(result.defaulted).not.toContain("RCLONE.BINARY");
  });

  it("does not add example entries to the user's own mappings or lists", async () => {
    const path = writeConfig(JSON.stringify({ SERVER_PASS: "0123456789abcdef", SERVER_PATH_MAPPINGS: {}, SERVER_IGNORE_LIST: [] }));
    await upgradeConfigFile(path);
    const upgraded = readJson(path);
    expect(upgraded.SERVER_PATH_MAPPINGS).toEqual({});
    expect(upgraded.SERVER_IGNORE_LIST).toEqual([]);
  });

  it("names what it cannot fix as the server would (an unknown key, a wrong type), and keeps it", async () => {
    const path = writeConfig(JSON.stringify({ SERVER_PASS: "0123456789abcdef0123", SERVER_PATH_MAPPING: {}, SERVER_PORT: "x", GDRIVE: {} }));
    const result = await upgradeConfigFile(path);
    expect(result.problems).toEqual([
      'SERVER_PORT: expected a whole number (no quotes), found "x".',
      'Unknown key "SERVER_PATH_MAPPING" — did you mean "SERVER_PATH_MAPPINGS"?',
    ]);
    expect(readJson(path)).toMatchObject({ SERVER_PATH_MAPPING: {}, SERVER_PORT: "x", CLOUD: {} });
    const fine = await upgradeConfigFile(writeConfig(fixtureText("l3uddz-legacy.json")));
    expect(fine.problems).toEqual([]);
  });

  it("says there is nothing to upgrade when there is no file, and how to get one", async () => {
    const path = join(dir, "missing", "config.json");
    await expect(upgradeConfigFile(path)).rejects.toThrow(ConfigError);
    await expect(upgradeConfigFile(path)).rejects.toThrow(`No config file at ${path}: nothing to upgrade.`);
    expect(existsSync(path)).toBe(false);
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

describe("config upgrade: every key it drops is named, with why", () => {
  const PASS = "0123456789abcdef0123456789abcdef";
  it.each([
    ["PLEX_SECTION_PATH_MAPPINGS", { PLEX_SECTION_PATH_MAPPINGS: { "1": ["/Movies/"] } }, /^obsolete in autoscan \(sections come from Plex/],
    ["USE_QUOTED_SCAN_DIRECTORY", { USE_QUOTED_SCAN_DIRECTORY: true }, /^obsolete in autoscan/],
    ["SERVER_USE_SQLITE", { SERVER_USE_SQLITE: true }, /^obsolete in autoscan \(the queue is always durable now\)$/],
    ["PLEX_EXTRA_DIRS", { PLEX_EXTRA_DIRS: ["Extras"] }, /by275 fork/],
    ["GOOGLE.IGNORE_PATHS", { GOOGLE: { IGNORE_PATHS: ["My Drive/Backups/"] } }, /^obsolete in autoscan \(list the wanted paths in CLOUD\.ALLOWED\.FILE_PATHS\)$/],
    ["GOOGLE.DRIVES.MY_DRIVE", { GOOGLE: { DRIVES: { MY_DRIVE: false, SHARED_DRIVES: true } } }, /My Drive is always watched/],
    // plex_autoscan added new keys beside the old ones and never removed those: the old one goes, the new one stays.
    ["DOCKER_FILE_EXIST_PATH_MAPPINGS", { DOCKER_FILE_EXIST_PATH_MAPPINGS: { "/a/": ["/b/"] }, SERVER_FILE_EXIST_PATH_MAPPINGS: {} }, /^replaced by SERVER_FILE_EXIST_PATH_MAPPINGS, which is also set/],
    ["GDRIVE", { GDRIVE: { POLL_INTERVAL: 60 }, GOOGLE: { POLL_INTERVAL: 240 } }, /^replaced by CLOUD, which is also in the file/],
    ["RCLONE_RC_CACHE_EXPIRE", { RCLONE_RC_CACHE_EXPIRE: { ENABLED: true }, RCLONE: { RC_CACHE_REFRESH: { ENABLED: false } } }, /^replaced by RCLONE\.RC_CACHE_REFRESH, which is also set/],
    ["GOOGLE.ALLOW_PATHS", { GOOGLE: { ALLOW_PATHS: ["a/"], ALLOWED: { FILE_PATHS: ["b/"] } } }, /^replaced by CLOUD\.ALLOWED\.FILE_PATHS, which is also set/],
  ])("%s", async (key, raw, why) => {
    const path = writeConfig(JSON.stringify({ SERVER_PASS: PASS, ...raw }));
    const result = await upgradeConfigFile(path);
    const entry = result.dropped.find((dropped) => dropped.key === key);
    expect(entry?.why, JSON.stringify(result.dropped)).toMatch(why);
    expect(valueAt(readJson(path), key)).toBeUndefined();
    expect(readFileSync(`${path}.bak`, "utf8")).toContain(`"${key.split(".").at(-1) ?? key}"`);
  });

  it.each(["plex-autoscan-full.json", "l3uddz-legacy.json", "by275.json", "plex-autoscan-defaults.json"])(
    "%s: no key leaves the file without a line saying where it went",
    async (name) => {
      const path = writeConfig(fixtureText(name));
      const result = await upgradeConfigFile(path);
      const upgraded = readJson(path);
      const said = [...result.renamed.map((rename) => rename.split(" → ")[0] ?? ""), ...result.dropped.map((entry) => entry.key)];
      const sectionsRenamed = new Map(result.renamed.map((rename) => rename.split(" → ") as [string, string]));
      for (const [key] of leafKeys(readFixture(name))) {
        const top = key.split(".")[0] ?? key;
        const renamedTop = sectionsRenamed.get(top);
        const at = renamedTop ? `${renamedTop}${key.slice(top.length)}` : key;
        if (valueAt(upgraded, at) !== undefined) continue;
        expect(said.some((entry) => key === entry || key.startsWith(`${entry}.`)), `${key} went without a word`).toBe(true);
      }
    },
  );

  it('names the value it changes: by275\'s PLEX_ANALYZE_TYPE "loudness" becomes "basic"', async () => {
    const path = writeConfig(JSON.stringify({ SERVER_PASS: PASS, PLEX_ANALYZE_TYPE: "loudness" }));
    const result = await upgradeConfigFile(path);
    expect(result.changed).toEqual(['PLEX_ANALYZE_TYPE "loudness" → "basic": by275\'s loudness analysis is not supported']);
    expect(readJson(path).PLEX_ANALYZE_TYPE).toBe("basic");
  });
});

describe("config upgrade: the new sections a file could add", () => {
  it("lists each section of autoscan's own features the file lacks, what it does and where it is documented; writes none", async () => {
    const path = writeConfig(fixtureText("plex-autoscan-full.json"));
    const result = await upgradeConfigFile(path);
    expect(result.newSections.map((section) => section.key)).toEqual(["ARR", "TARGETS", "NOTIFY", "WATCH", "SERVER_ANCHORS", "SERVER_DATABASE_URL"]);
    for (const section of result.newSections) {
      expect(section.what.length, section.key).toBeGreaterThan(10);
      expect(section.docs, section.key).toMatch(/^docs\/[a-z-]+\.md#[a-z-]+$/);
      expect(readJson(path), section.key).not.toHaveProperty(section.key);
    }
  });

  it("leaves out the sections the file has, and one a variable sets", async () => {
    const path = writeConfig(JSON.stringify({ SERVER_PASS: "0123456789abcdef0123", WATCH: {}, NOTIFY: { discord: { TYPE: "discord", URL: "https://discord.com/api/webhooks/1/x" } } }));
    const result = await upgradeConfigFile(path, { env: { SERVER_DATABASE_URL_FILE: "/run/secrets/db" } });
    expect(result.newSections.map((section) => section.key)).toEqual(["ARR", "TARGETS", "SERVER_ANCHORS"]);
  });
});

describe("config upgrade --dry-run", () => {
  it("says everything a run would do and writes nothing", async () => {
    const text = fixtureText("l3uddz-legacy.json");
    const path = writeConfig(text);
    const dry = await upgradeConfigFile(path, { dryRun: true });
    expect(readFileSync(path, "utf8")).toBe(text);
    expect(existsSync(`${path}.bak`)).toBe(false);
    expect(dry).toMatchObject({ written: false, backup: undefined });
    const real = await upgradeConfigFile(path);
    expect(real.written).toBe(true);
    expect({ ...dry, written: true, backup: real.backup }).toEqual(real);
  });
});
