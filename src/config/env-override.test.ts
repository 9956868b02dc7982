import { describe, expect, it } from "vitest";
import { ConfigError } from "../core/errors.ts";
import { parseConfigText } from "./load.ts";

const FILE = JSON.stringify({ SERVER_PASS: "0123456789abcdef0123", SERVER_PORT: 3468, PLEX_TOKEN: "fileToken123" });
const load = (env: Record<string, string | undefined>) => parseConfigText(FILE, "/x/config.json", env);

function problemsWith(env: Record<string, string>): readonly string[] {
  try {
    load(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).problems;
  }
  throw new Error("the config was accepted");
}

describe("environment overrides of top-level keys (plex_autoscan: a variable named like the key, JSON-decoded)", () => {
  it("decodes JSON: numbers, booleans, lists and objects", () => {
    const { config } = load({
      SERVER_SCAN_DELAY: "30",
      USE_DOCKER: "true",
      SERVER_IGNORE_LIST: '["/.grab/", "sample"]',
      SERVER_PATH_MAPPINGS: '{"/data/Movies/": ["/mnt/Movies/"]}',
    });
    expect(config.SERVER_SCAN_DELAY).toBe(30);
    expect(config.USE_DOCKER).toBe(true);
    expect(config.SERVER_IGNORE_LIST).toEqual(["/.grab/", "sample"]);
    expect(config.SERVER_PATH_MAPPINGS).toEqual({ "/data/Movies/": ["/mnt/Movies/"] });
  });

  it("wins over the file's value", () => {
    expect(load({ SERVER_PORT: "4000" }).config.SERVER_PORT).toBe(4000);
  });

  it("takes a value that is not JSON as a plain string", () => {
    const { config } = load({ PLEX_TOKEN: "envToken-abc", PLEX_LOCAL_URL: "http://plex:32400", DOCKER_NAME: "my plex" });
    expect(config.PLEX_TOKEN).toBe("envToken-abc");
    expect(config.PLEX_LOCAL_URL).toBe("http://plex:32400");
    expect(config.DOCKER_NAME).toBe("my plex");
  });

  it("takes a JSON string literal as that string", () => {
    expect(load({ PLEX_TOKEN: '"quoted-token"' }).config.PLEX_TOKEN).toBe("quoted-token");
  });

  it("keeps a value made of digits as text when the key holds text (SERVER_PASS=20251122…)", () => {
    const { config } = load({ SERVER_PASS: "2025112218440012", PLEX_TOKEN: "12345678901234567890" });
    expect(config.SERVER_PASS).toBe("2025112218440012");
    expect(config.PLEX_TOKEN).toBe("12345678901234567890");
  });

  it("treats an empty variable as unset (compose's ${KEY:-} does not blank the file's value)", () => {
    const { config, notes } = load({ SERVER_PORT: "", PLEX_TOKEN: "" });
    expect(config.SERVER_PORT).toBe(3468);
    expect(config.PLEX_TOKEN).toBe("fileToken123");
    expect(notes).toEqual([]);
  });

  it("replaces a whole section", () => {
    expect(load({ CLOUD: '{"ENABLED": true, "POLL_INTERVAL": 30}' }).config.CLOUD).toMatchObject({ ENABLED: true, POLL_INTERVAL: 30 });
  });

  it("reads a GOOGLE variable (plex_autoscan's section name) as CLOUD", () => {
    expect(load({ GOOGLE: '{"ENABLED": true, "POLL_INTERVAL": 45}' }).config.CLOUD).toMatchObject({ ENABLED: true, POLL_INTERVAL: 45 });
  });

  it("ignores variables that are not config keys", () => {
    const { config, notes } = load({ HOME: "/root", PATH: "/usr/bin", SERVER_PORTS: "1", server_port: "1" });
    expect(config.SERVER_PORT).toBe(3468);
    expect(notes).toEqual([]);
  });

  it("says which variables were used, like plex_autoscan's 'Using ENV setting', with secrets masked", () => {
    const { notes } = load({
      SERVER_PORT: "4000",
      PLEX_TOKEN: "envSecretToken999",
      SERVER_PASS: "envSecretPass9999",
      CLOUD: '{"CLIENT_SECRET": "envClientSecret777"}',
    });
    expect(notes).toContain("Using ENV setting SERVER_PORT=4000");
    expect(notes.some((n) => n.startsWith("Using ENV setting PLEX_TOKEN="))).toBe(true);
    expect(notes.some((n) => n.startsWith("Using ENV setting SERVER_PASS="))).toBe(true);
    const text = notes.join("\n");
    for (const secret of ["envSecretToken999", "envSecretPass9999", "envClientSecret777"]) expect(text).not.toContain(secret);
  });

  it("names the variable when its value is wrong", () => {
    expect(problemsWith({ SERVER_PORT: "abc" })).toEqual([
      'SERVER_PORT (from environment variable SERVER_PORT): expected a whole number (no quotes), found "abc".',
    ]);
    expect(problemsWith({ USE_DOCKER: "yes" })).toEqual([
      'USE_DOCKER (from environment variable USE_DOCKER): expected true or false (no quotes), found "yes".',
    ]);
  });

  it("names the variable for a problem inside a section it set", () => {
    expect(problemsWith({ CLOUD: '{"POLL_INTERVAL": "often"}' })).toEqual([
      'CLOUD.POLL_INTERVAL (from environment variable CLOUD): expected a whole number (no quotes), found "often".',
    ]);
  });
});
