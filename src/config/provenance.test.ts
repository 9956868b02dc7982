import { describe, expect, it } from "vitest";
import { parseConfigText } from "./load.ts";
import { describeSource, sourceLabel, sourceName } from "./provenance.ts";

const FILE = JSON.stringify({ SERVER_PASS: "0123456789abcdef0123", SERVER_PORT: 3468, PLEX_LOCAL_URL: "http://localhost:32400", GOOGLE: { ENABLED: false } });
const sources = (env: Record<string, string>) => parseConfigText(FILE, "/c/config.json", env).sources;

describe("where a value comes from", () => {
  it("tells default, config.json (old name said), environment and secret file apart", () => {
    const got = sources({ PLEX_LOCAL_URL: "http://plex:32400" });
    expect(got.get("SERVER_SCAN_DELAY")).toEqual({ kind: "default" });
    expect(got.get("SERVER_PORT")).toEqual({ kind: "config.json", path: "/c/config.json" });
    expect(got.get("CLOUD")).toEqual({ kind: "config.json", path: "/c/config.json", as: "GOOGLE" });
    expect(got.get("PLEX_LOCAL_URL")).toEqual({ kind: "environment", variable: "PLEX_LOCAL_URL", overrides: { value: "http://localhost:32400" } });
    expect(sourceName({ kind: "file-variable", variable: "SERVER_DATABASE_URL_FILE", file: "/run/secrets/db" })).toBe("secret file");
    expect(sourceLabel({ kind: "file-variable", variable: "SERVER_DATABASE_URL_FILE", file: "/run/secrets/db" })).toBe("secret file (SERVER_DATABASE_URL_FILE)");
  });

  it("a variable that sets a key config.json lacks overrides nothing; a GOOGLE variable sets CLOUD", () => {
    const got = sources({ SERVER_SCAN_DELAY: "30", GOOGLE: '{"ENABLED": true}' });
    expect(got.get("SERVER_SCAN_DELAY")).toEqual({ kind: "environment", variable: "SERVER_SCAN_DELAY" });
    expect(got.get("CLOUD")).toMatchObject({ kind: "environment", overrides: { value: { ENABLED: false }, as: "GOOGLE" } });
  });

  it("says the file's value is ignored, and where to change the one in force", () => {
    const source = sources({ PLEX_LOCAL_URL: "http://plex:32400" }).get("PLEX_LOCAL_URL");
    if (!source) throw new Error("no source");
    const inContainer = describeSource("PLEX_LOCAL_URL", source, true);
    expect(inContainer).toContain("docker-compose.yml sets it from .env");
    expect(inContainer).toContain("config.json also holds PLEX_LOCAL_URL, which is ignored while the variable is set");
    expect(describeSource("PLEX_LOCAL_URL", source, false)).not.toMatch(/compose|docker/);
  });

  it("in a container, SERVER_PORT set by the image: the host's port is AUTOSCAN_PORT, and the file's port has no effect", () => {
    const source = sources({ SERVER_PORT: "3467" }).get("SERVER_PORT");
    if (!source) throw new Error("no source");
    expect(source).toMatchObject({ kind: "environment", overrides: { value: 3468 } });
    const text = describeSource("SERVER_PORT", source, true);
    expect(text).toContain("the image sets it");
    expect(text).toContain("AUTOSCAN_PORT in .env");
    expect(text).toContain("config.json's SERVER_PORT has no effect in the container");
    expect(describeSource("SERVER_PORT", source, false)).toContain("config.json also holds SERVER_PORT, which is ignored while the variable is set");
  });
});
