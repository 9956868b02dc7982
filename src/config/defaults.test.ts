import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { autoscanPath, EXAMPLE_CONFIG, leafKeys, readFixture, valueAt } from "../../test/support/config-fixtures.ts";
import { buildDefaultConfig, defaultConfig, EXAMPLE_PASS, generateServerPass, renderConfig } from "./defaults.ts";
import { ignoredKeyNotes } from "./features.ts";
import { buildFirstConfig } from "./first-config.ts";
import { parseConfigText } from "./load.ts";

// plex_autoscan's table of keys and defaults (shared/reference/plex_autoscan.md §1), written down by hand: the
// fixture is the reference, not a copy of our schema, so a changed default fails here.
const REFERENCE_DEFAULTS = leafKeys(readFixture("plex-autoscan-defaults.json"));

describe("defaults", () => {
  const minimal = parseConfigText('{ "SERVER_PASS": "0123456789abcdef0123" }', "/x/config.json", {}).config;

  it("covers every key of plex_autoscan's table", () => {
    // 54 keys in the table, GOOGLE's and RCLONE's nested keys counted one by one; SERVER_PASS (random) is tested below.
    expect(REFERENCE_DEFAULTS.length).toBe(53);
  });

  it.each(REFERENCE_DEFAULTS)("%s defaults to plex_autoscan's %j", (path, value) => {
    expect(valueAt(minimal, autoscanPath(path))).toEqual(value);
  });

  it("generates SERVER_PASS like plex_autoscan's uuid4().hex: 32 hex characters, new each time", () => {
    const passes = new Set(Array.from({ length: 20 }, () => generateServerPass()));
    expect(passes.size).toBe(20);
    for (const pass of passes) expect(pass).toMatch(/^[0-9a-f]{32}$/);
  });
});

describe("config/config.example.json", () => {
  const text = readFileSync(EXAMPLE_CONFIG, "utf8");

  it("is exactly the first config (no variable set) with the example's placeholder (the two never drift)", () => {
    expect(text).toBe(renderConfig(buildFirstConfig(EXAMPLE_PASS, {}).config));
  });

  it("loads as it is, with one warning: the placeholder SERVER_PASS", () => {
    const loaded = parseConfigText(text, EXAMPLE_CONFIG, {});
    expect(loaded.config.SERVER_PASS).toBe(EXAMPLE_PASS);
    expect(loaded.warnings).toHaveLength(1);
    expect(loaded.warnings[0]).toMatch(/SERVER_PASS is still the example's placeholder/);
  });

  it("maps nothing by example: plex_autoscan's Cloudbox mappings and drive paths are wrong for most setups", () => {
    const example = JSON.parse(text) as Record<string, unknown>;
    expect(example.SERVER_PATH_MAPPINGS).toEqual({});
    expect(text).not.toContain("/mnt/unionfs");
    expect(text).not.toContain("My Drive");
  });
});

describe("every key the first config leaves out", () => {
  const reference = readFileSync(fileURLToPath(new URL("../../docs/configuration.md", import.meta.url)), "utf8");
  const defaults = defaultConfig() as unknown as Record<string, unknown>;

  it.each(Object.keys(defaults))("%s is documented in docs/configuration.md", (key) => {
    expect(reference).toContain(`\`${key}\``);
  });

  it("is at its default when the first config loads (nothing else is set behind the user's back)", () => {
    const { config } = parseConfigText(renderConfig(buildFirstConfig(generateServerPass(), {}).config), "/x/config.json", {});
    const { SERVER_PASS: _pass, ...rest } = config;
    const { SERVER_PASS: _none, ...expected } = defaults;
    expect(rest).toEqual(expected);
  });

  it("a full every-key file (what config upgrade leaves) loads with no note that one of its keys is ignored", () => {
    const loaded = parseConfigText(renderConfig(buildDefaultConfig(generateServerPass())), "/x/config.json", {});
    expect(ignoredKeyNotes(loaded.config, loaded.explicitKeys)).toEqual([]);
    expect(loaded.warnings).toEqual([]);
  });
});
