import { describe, expect, it } from "vitest";
import { fixturePath, fixtureText } from "../../test/support/config-fixtures.ts";
import { parseConfigText } from "./load.ts";

const load = (name: string) => parseConfigText(fixtureText(name), fixturePath(name), {});
const loadObject = (raw: Record<string, unknown>) =>
  parseConfigText(JSON.stringify({ SERVER_PASS: "0123456789abcdef", ...raw }), "/x/config.json", {});

/** The one warning that names `key`; fails when there is none or more than one. */
function warningAbout(warnings: readonly string[], key: string): string {
  const found = warnings.filter((w) => w.includes(`"${key}"`));
  expect(found, `one warning naming "${key}" in:\n${warnings.join("\n")}`).toHaveLength(1);
  return found[0] ?? "";
}

describe("an l3uddz-era config.json with plex_autoscan's renamed keys", () => {
  it("loads: no key of the old file is an error", () => {
    expect(() => load("l3uddz-legacy.json")).not.toThrow();
  });

  it.each([
    ["GDRIVE", "CLOUD"],
    ["RCLONE_RC_CACHE_EXPIRE", "RCLONE.RC_CACHE_REFRESH"],
    ["DOCKER_FILE_EXIST_PATH_MAPPINGS", "SERVER_FILE_EXIST_PATH_MAPPINGS"],
    ["PLEX_ANALYZE_FILE_TYPE", "PLEX_ANALYZE_TYPE"],
  ])("warns that %s was replaced by %s", (oldKey, newKey) => {
    expect(warningAbout(load("l3uddz-legacy.json").warnings, oldKey)).toContain(`"${newKey}"`);
  });

  it.each(["PLEX_SECTION_PATH_MAPPINGS", "USE_QUOTED_SCAN_DIRECTORY"])("warns that %s is obsolete and ignored", (key) => {
    expect(warningAbout(load("l3uddz-legacy.json").warnings, key)).toMatch(/obsolete and ignored/);
  });

  it("names the old drive keys with what replaced them", () => {
    const text = load("l3uddz-legacy.json").warnings.join("\n");
    expect(text).toMatch(/ALLOW_PATHS".*"CLOUD\.ALLOWED\.FILE_PATHS"/);
    expect(text).toMatch(/SCAN_EXTENSIONS".*"CLOUD\.ALLOWED\.FILE_EXTENSIONS_LIST"/);
    expect(text).toMatch(/SHOW_CACHE_MESSAGES".*SHOW_CACHE_LOGS"/);
    expect(text).toMatch(/IGNORE_PATHS" is obsolete/);
  });

  it("migrates the values whose meaning is the same", () => {
    const { config } = load("l3uddz-legacy.json");
    expect(config.SERVER_FILE_EXIST_PATH_MAPPINGS).toEqual({ "/home/seed/plexdrive/": ["/data/"] });
    expect(config.PLEX_ANALYZE_TYPE).toBe("deep");
    expect(config.CLOUD).toMatchObject({
      ENABLED: true,
      CLIENT_ID: "legacy-client.apps.googleusercontent.com",
      CLIENT_SECRET: "legacyGdriveSecret987",
      TEAMDRIVE: true,
      POLL_INTERVAL: 90,
      SHOW_CACHE_LOGS: false,
      ALLOWED: {
        FILE_PATHS: ["My Drive/Media/Movies/", "My Drive/Media/TV/"],
        FILE_EXTENSIONS: true,
        FILE_EXTENSIONS_LIST: ["webm", "mkv", "avi", "mp4"],
      },
    });
    expect(config.RCLONE.RC_CACHE_REFRESH.ENABLED).toBe(true);
    expect(config.RCLONE.RC_CACHE_REFRESH.RC_URL).toBe("http://localhost:5572");
  });

  it("migrates RCLONE_RC_CACHE_EXPIRE.FILE_EXISTS_TO_REMOTE_MAPPINGS too (same meaning under RCLONE.RC_CACHE_REFRESH)", () => {
    const { config } = load("l3uddz-legacy.json");
    expect(config.RCLONE.RC_CACHE_REFRESH.FILE_EXISTS_TO_REMOTE_MAPPINGS).toEqual({
      "Media/": ["/home/seed/plexdrive/Media/"],
    });
  });

  it("keeps the values of the keys that did not change", () => {
    const { config } = load("l3uddz-legacy.json");
    expect(config.SERVER_PORT).toBe(3468);
    expect(config.SERVER_PASS).toBe("3f2a6c1d9b8e4f70a5c6d7e8f9012345");
    expect(config.PLEX_TOKEN).toBe("legacyPlexToken456");
    expect(config.PLEX_LD_LIBRARY_PATH).toBe("/usr/lib/plexmediaserver");
    expect(config.SERVER_SCAN_PRIORITIES).toEqual({ "1": ["/Movies/"], "2": ["/TV/"] });
  });
});

describe("legacy keys next to the keys that replaced them (plex_autoscan added new keys but never removed old ones)", () => {
  it("the new key wins; the old one is named as ignored", () => {
    const loaded = loadObject({
      DOCKER_FILE_EXIST_PATH_MAPPINGS: { "/old/": ["/x/"] },
      SERVER_FILE_EXIST_PATH_MAPPINGS: { "/new/": ["/y/"] },
      PLEX_ANALYZE_FILE_TYPE: "deep",
      PLEX_ANALYZE_TYPE: "off",
    });
    expect(loaded.config.SERVER_FILE_EXIST_PATH_MAPPINGS).toEqual({ "/new/": ["/y/"] });
    expect(loaded.config.PLEX_ANALYZE_TYPE).toBe("off");
    expect(warningAbout(loaded.warnings, "DOCKER_FILE_EXIST_PATH_MAPPINGS")).toMatch(/ignored.*"SERVER_FILE_EXIST_PATH_MAPPINGS"/);
    expect(warningAbout(loaded.warnings, "PLEX_ANALYZE_FILE_TYPE")).toMatch(/ignored.*"PLEX_ANALYZE_TYPE"/);
  });

  it("an RCLONE section wins over RCLONE_RC_CACHE_EXPIRE", () => {
    const loaded = loadObject({
      RCLONE_RC_CACHE_EXPIRE: { ENABLED: true, RC_URL: "http://old:5572" },
      RCLONE: { RC_CACHE_REFRESH: { ENABLED: false, RC_URL: "http://new:5572" } },
    });
    expect(loaded.config.RCLONE.RC_CACHE_REFRESH).toMatchObject({ ENABLED: false, RC_URL: "http://new:5572" });
    expect(warningAbout(loaded.warnings, "RCLONE_RC_CACHE_EXPIRE")).toContain('"RCLONE.RC_CACHE_REFRESH"');
  });

  it("a GDRIVE section next to GOOGLE is ignored with a warning, GOOGLE is read", () => {
    const loaded = loadObject({ GDRIVE: { POLL_INTERVAL: 60 }, GOOGLE: { POLL_INTERVAL: 240 } });
    expect(loaded.config.CLOUD.POLL_INTERVAL).toBe(240);
    expect(warningAbout(loaded.warnings, "GDRIVE")).toMatch(/ignored/);
  });

  it("RCLONE.CRYPT_MAPPING is renamed to RCLONE.CRYPT_MAPPINGS with its value", () => {
    const loaded = loadObject({ RCLONE: { CRYPT_MAPPING: { "My Drive/encrypt/": ["gcrypt:"] } } });
    expect(loaded.config.RCLONE.CRYPT_MAPPINGS).toEqual({ "My Drive/encrypt/": ["gcrypt:"] });
    expect(warningAbout(loaded.warnings, "RCLONE.CRYPT_MAPPING")).toContain('"RCLONE.CRYPT_MAPPINGS"');
  });

  it("a legacy key inside a section is not mistaken for an unknown key when the section is called GOOGLE", () => {
    const loaded = loadObject({ GOOGLE: { SHOW_CACHE_MESSAGES: false } });
    expect(loaded.config.CLOUD.SHOW_CACHE_LOGS).toBe(false);
  });
});

describe("a by275 config.json", () => {
  it("loads", () => {
    expect(() => load("by275.json")).not.toThrow();
  });

  it("reads GOOGLE.DRIVES as the shared-drive switches, and keeps SERVICE_ACCOUNT_FILE", () => {
    const { config, warnings } = load("by275.json");
    expect(config.CLOUD.TEAMDRIVE).toBe(true);
    expect(config.CLOUD.TEAMDRIVES).toEqual(["Shared Movies"]);
    expect(config.CLOUD.SERVICE_ACCOUNT_FILE).toBe("/config/service-account.json");
    expect(config.CLOUD.ALLOWED.FILE_PATHS).toEqual(["My Drive/Media/Movies/", "Shared Movies/4K/"]);
    expect(warningAbout(warnings, "CLOUD.DRIVES")).toMatch(/"CLOUD.TEAMDRIVE" and "CLOUD.TEAMDRIVES"/);
  });

  it.each(["USE_SMI2SRT", "PLEX_ASSET_EXTENSIONS", "PLEX_EXTRA_DIRS"])("warns that the fork's %s is not supported", (key) => {
    expect(warningAbout(load("by275.json").warnings, key)).toMatch(/obsolete and ignored/);
  });

  it("keeps the rest as written", () => {
    const { config } = load("by275.json");
    expect(config.PLEX_USER).toBe("abc");
    expect(config.PLEX_LOCAL_URL).toBe("http://plex:32400");
    expect(config.RCLONE.RC_CACHE_REFRESH.FILE_EXISTS_TO_REMOTE_MAPPINGS).toEqual({ "Media/": ["/mnt/rclone/Media/"] });
  });

  it('accepts by275\'s PLEX_ANALYZE_TYPE "loudness" (the fork added it; reference §1)', () => {
    expect(() => parseConfigText(
      JSON.stringify({ SERVER_PASS: "1e34f8652a23403195093315b19b1c01", PLEX_ANALYZE_TYPE: "loudness" }),
      "/x/config.json",
      {},
    )).not.toThrow();
  });
});
