import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ConfigError } from "../core/errors.ts";
import { makeTempDir } from "../../test/support/capture-log.ts";
import {
  autoscanPath,
  EXAMPLE_CONFIG,
  fixturePath,
  fixtureText,
  leafKeys,
  readFixture,
  valueAt,
} from "../../test/support/config-fixtures.ts";
import { loadConfig, parseConfigText, type LoadedConfig } from "./load.ts";

const REFERENCE_DEFAULTS = new Map(leafKeys(readFixture("plex-autoscan-defaults.json")));

function load(name: string): LoadedConfig {
  return parseConfigText(fixtureText(name), fixturePath(name), {});
}

describe("a plex_autoscan user's config.json (every key of the reference, none at its default)", () => {
  const fixture = readFixture("plex-autoscan-full.json");
  const keys = leafKeys(fixture).filter(([path]) => path !== "SERVER_PASS");

  it("sets every key of plex_autoscan's table, and only those", () => {
    expect(keys.map(([path]) => path).sort()).toEqual([...REFERENCE_DEFAULTS.keys()].sort());
  });

  it.each(keys)("%s is not at its default in the fixture (so loading it proves something)", (path, value) => {
    expect(value).not.toEqual(REFERENCE_DEFAULTS.get(path));
  });

  it.each(keys)("%s loads unchanged", (path, value) => {
    expect(valueAt(load("plex-autoscan-full.json").config, autoscanPath(path))).toEqual(value);
  });

  it("loads without a single warning; the GOOGLE section is read as CLOUD with a note", () => {
    const loaded = load("plex-autoscan-full.json");
    expect(loaded.config.SERVER_PASS).toBe("9c4b81fe234e4d6eb9011cefe514d915");
    expect(loaded.warnings).toEqual([]);
    expect(loaded.notes.join("\n")).toMatch(/"GOOGLE" section as "CLOUD"/);
    expect(loaded.config).not.toHaveProperty("GOOGLE");
  });

  it("records the keys the user set, so presets only fill the others", () => {
    const loaded = load("plex-autoscan-full.json");
    expect(loaded.explicitKeys.has("USE_DOCKER")).toBe(true);
    expect(loaded.explicitKeys.has("CLOUD")).toBe(true);
    expect(loaded.explicitKeys.has("PLEX_SCAN_METHOD")).toBe(false);
  });

  it("reads the section as CLOUD too, and CLOUD wins (with a warning) when both are present", () => {
    const text = JSON.stringify({
      SERVER_PASS: "0123456789abcdef",
      CLOUD: { POLL_INTERVAL: 300 },
      GOOGLE: { POLL_INTERVAL: 30 },
    });
    const loaded = parseConfigText(text, "/x/config.json", {});
    expect(loaded.config.CLOUD.POLL_INTERVAL).toBe(300);
    expect(loaded.warnings.join("\n")).toMatch(/"GOOGLE" is ignored because "CLOUD" is also present/);
  });

  it("accepts the values plex_autoscan's own sample used (port 3468, USE_SQLITE true, mappings without trailing slash)", () => {
    const sample = {
      SERVER_PASS: "9c4b81fe234e4d6eb9011cefe514d915",
      SERVER_PORT: 3468,
      SERVER_USE_SQLITE: true,
      SERVER_PATH_MAPPINGS: { "/mnt/unionfs": ["/home/seed/media/fused"] },
      SERVER_FILE_EXIST_PATH_MAPPINGS: { "/mnt/unionfs/media": ["/data"] },
      DOCKER_NAME: "",
    };
    const loaded = parseConfigText(JSON.stringify(sample), "/x/config.json", {});
    expect(loaded.config).toMatchObject(sample);
  });
});

describe("loadConfig", () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => ({ dir, cleanup } = await makeTempDir("autoscan-load-")));
  afterEach(() => cleanup());

  it("reads a file from disk, with a UTF-8 byte order mark tolerated", async () => {
    const path = join(dir, "config.json");
    writeFileSync(path, `\uFEFF${fixtureText("plex-autoscan-full.json")}`);
    const loaded = await loadConfig(path, {}, false);
    expect(loaded.kind).toBe("loaded");
    expect(loaded.kind === "loaded" && loaded.config.SERVER_PORT).toBe(3468);
  });

  it("without createIfMissing, a missing file is a ConfigError that says how to create one", async () => {
    const path = join(dir, "nope", "config.json");
    const error = await loadConfig(path, {}, false).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toContain(path);
    expect((error as ConfigError).problems.join("\n")).toContain("autoscan config init");
  });

  it("on first start writes the short first config (the example with a fresh 32-hex SERVER_PASS), mode 0600", async () => {
    const path = join(dir, "sub", "dir", "config.json");
    const result = await loadConfig(path, {}, true);
    expect(result).toMatchObject({ kind: "created", path });
    const written = readFileSync(path, "utf8");
    const pass = (JSON.parse(written) as { SERVER_PASS: string }).SERVER_PASS;
    expect(pass).toMatch(/^[0-9a-f]{32}$/);
    const example = readFileSync(EXAMPLE_CONFIG, "utf8");
    expect(written).toBe(example.replace('"change-me-to-a-long-random-secret"', JSON.stringify(pass)));
    expect(statSync(path).mode & 0o777).toBe(0o600);
    // And what was written loads without a warning.
    const loaded = await loadConfig(path, {}, true);
    expect(loaded.kind === "loaded" && loaded.warnings).toEqual([]);
  });

  it("two first starts write two different secrets", async () => {
    await loadConfig(join(dir, "a.json"), {}, true);
    await loadConfig(join(dir, "b.json"), {}, true);
    const pass = (name: string): unknown => (JSON.parse(readFileSync(join(dir, name), "utf8")) as Record<string, unknown>).SERVER_PASS;
    expect(pass("a.json")).not.toBe(pass("b.json"));
  });

  it("a file that holds something other than an object is a ConfigError", async () => {
    const path = join(dir, "config.json");
    writeFileSync(path, "[1, 2]\n");
    await expect(loadConfig(path, {}, true)).rejects.toThrow(/must hold a JSON object/);
  });
});
