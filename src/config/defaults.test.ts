import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { autoscanPath, EXAMPLE_CONFIG, leafKeys, readFixture, valueAt } from "../../test/support/config-fixtures.ts";
import { buildDefaultConfig, EXAMPLE_PASS, generateServerPass, renderConfig } from "./defaults.ts";
import { ignoredKeyNotes } from "./features.ts";
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

  it("is exactly the default config rendered with the example's placeholder (the two never drift)", () => {
    expect(text).toBe(renderConfig(buildDefaultConfig(EXAMPLE_PASS)));
  });

  it("holds every key the schema knows, so it documents all of them", () => {
    const example = JSON.parse(text) as Record<string, unknown>;
    const defaults = buildDefaultConfig(EXAMPLE_PASS) as unknown as Record<string, unknown>;
    expect(Object.keys(example).sort()).toEqual(Object.keys(defaults).sort());
    expect(Object.keys(example.CLOUD as object).sort()).toEqual(Object.keys(defaults.CLOUD as object).sort());
  });

  it("a freshly written default file starts with no note that one of its own keys is ignored", () => {
    const loaded = parseConfigText(renderConfig(buildDefaultConfig(generateServerPass())), "/x/config.json", {});
    expect(ignoredKeyNotes(loaded.config, loaded.explicitKeys)).toEqual([]);
    expect(loaded.warnings).toEqual([]);
  });

  it("loads as it is, with one warning: the placeholder SERVER_PASS", () => {
    const loaded = parseConfigText(text, EXAMPLE_CONFIG, {});
    expect(loaded.config.SERVER_PASS).toBe(EXAMPLE_PASS);
    expect(loaded.warnings).toHaveLength(1);
    expect(loaded.warnings[0]).toMatch(/SERVER_PASS is still the example's placeholder/);
  });

  it("shows plex_autoscan's examples (a mapping, an ignore list, drive filters) so their shapes are visible", () => {
    const example = JSON.parse(text) as Record<string, unknown>;
    expect(Object.keys(example.SERVER_PATH_MAPPINGS as object).length).toBeGreaterThan(0);
    expect(example.SERVER_IGNORE_LIST).toEqual(["/.grab/", ".DS_Store", "Thumbs.db"]);
    expect(valueAt(example, "CLOUD.ALLOWED.MIME_TYPES_LIST")).toEqual(["video"]);
  });
});
