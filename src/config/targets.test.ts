import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError } from "../core/errors.ts";
import { parseConfigText } from "./load.ts";
import { upgradeConfigFile } from "./upgrade.ts";

/** `TARGETS` and `SERVER_ANCHORS` (issue 14): strict like every key, secrets never echoed, opt-in for old files. */
const PASS = "0123456789abcdef0123";
const TOKEN = "s3cr3t-jellyfin-key-0042";

function problems(raw: Record<string, unknown>): string[] {
  try {
    parseConfigText(JSON.stringify({ SERVER_PASS: PASS, ...raw }), "/c/config.json", {});
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return [...(error as ConfigError & { problems: string[] }).problems];
  }
  throw new Error("the config was accepted");
}

describe("TARGETS", () => {
  it("accepts each type with its defaults", () => {
    const { config } = parseConfigText(
      JSON.stringify({
        SERVER_PASS: PASS,
        TARGETS: {
          jellyfin: { TYPE: "Jellyfin", URL: "http://jellyfin:8096", TOKEN, PATH_MAPPINGS: { "/media/tv/": ["/data/TV/"] } },
          "plex-4k": { TYPE: "plex", URL: "http://plex4k:32400", TOKEN: "x" },
          nas: { TYPE: "autoscan", URL: "http://nas:3030", USERNAME: "u", PASSWORD: "p", ENABLED: false },
        },
        SERVER_ANCHORS: ["/mnt/remote/Media/.anchor"],
      }),
      "/c/config.json",
      {},
    );
    expect(config.TARGETS.jellyfin).toMatchObject({ TYPE: "jellyfin", ENABLED: true, TIMEOUT: 30, USERNAME: "" });
    expect(config.TARGETS.nas?.ENABLED).toBe(false);
    expect(config.SERVER_ANCHORS).toEqual(["/mnt/remote/Media/.anchor"]);
  });

  it("names the key to set, the nearest known key, and never echoes a token", () => {
    expect(problems({ TARGETS: { jellyfin: { TYPE: "jellyfin", URL: "http://j:8096" } } })).toEqual([
      'TARGETS.jellyfin.TOKEN: a "jellyfin" target needs TOKEN (a Jellyfin API key: Dashboard → API Keys).',
    ]);
    expect(problems({ TARGETS: { emby: { TYPE: "emby", URL: "http://e:8096", TOKEN, PATH_MAPPING: {} } } })).toEqual([
      'Unknown key "PATH_MAPPING" in "TARGETS.emby" — did you mean "PATH_MAPPINGS"?',
    ]);
    const reserved = problems({ TARGETS: { plex: { TYPE: "plex", URL: "http://p:32400", TOKEN } } });
    expect(reserved).toEqual(['TARGETS.plex: the name "plex" is the primary Plex (the PLEX_* keys); pick another, e.g. "plex-4k".']);
    const badToken = problems({ TARGETS: { j: { TYPE: "jellyfin", URL: "http://j:8096", TOKEN: 42 } } });
    expect(badToken).toEqual(["TARGETS.j.TOKEN: expected a string, found a number (value hidden)."]);
    const all = problems({ TARGETS: { x: { TYPE: "kodi", URL: "ftp://x", TOKEN } } }).join("\n");
    expect(all).toContain('TARGETS.x.TYPE: expected one of "plex", "jellyfin", "emby", "autoscan", "audiobookshelf", found a string (value hidden).');
    expect(all).not.toContain(TOKEN);
    expect(problems({ TARGETS: { r: { TYPE: "autoscan", URL: "http://r:3030", USERNAME: "u" } } })[0]).toContain("USERNAME and PASSWORD go together");
    // Names may hold dots; a section given as a list is refused and not echoed (it holds the tokens).
    expect(problems({ TARGETS: { "jf.4k": { TYPE: "jellyfin", URL: "http://j:8096", TOKEN: 123456789012345 } } })).toEqual([
      "TARGETS.jf.4k.TOKEN: expected a string, found a number (value hidden).",
    ]);
    const list = problems({ TARGETS: [{ TYPE: "jellyfin", URL: "http://j:8096", TOKEN }] });
    expect(list).toEqual([
      'TARGETS: expected an object of name → target, e.g. {"jellyfin": {"TYPE": "jellyfin", "URL": "http://jellyfin:8096", "TOKEN": "…"}}, found a list (value hidden).',
    ]);
    const apps = problems({ ARR: [{ TYPE: "sonarr", URL: "http://s:8989", API_KEY: TOKEN }] }).join("\n");
    expect(apps).toContain("ARR: expected an object of name → app");
    expect(apps).not.toContain(TOKEN);
    expect(problems({ SERVER_ANCHORS: ["Media/.anchor"] })).toEqual([
      'SERVER_ANCHORS[0]: expected an absolute path to an anchor file, found "Media/.anchor".',
    ]);
  });

  it("is left out of an existing file by config upgrade (a feature one opts into)", async () => {
    const dir = await mkdtemp(join(tmpdir(), "autoscan-targets-"));
    try {
      const path = join(dir, "config.json");
      const { buildDefaultConfig, renderConfig } = await import("./defaults.ts");
      const { TARGETS: _t, SERVER_ANCHORS: _a, ...current } = buildDefaultConfig(PASS);
      await writeFile(path, renderConfig(current));
      const result = await upgradeConfigFile(path);
      expect(result.added).toEqual([]);
      expect(JSON.parse(await readFile(path, "utf8"))).not.toHaveProperty("TARGETS");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
