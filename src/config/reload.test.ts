import { describe, expect, it } from "vitest";
import { parseConfigText } from "./load.ts";
import { diffConfig, effectiveLogLevel } from "./reload.ts";

const load = (raw: Record<string, unknown>) =>
  parseConfigText(JSON.stringify({ SERVER_PASS: "0123456789abcdef0123456789abcdef", ...raw }), "/x/config.json", {}).config;

describe("what a reload changes", () => {
  it("sorts changed keys into the ones applied now and the ones that need a restart", () => {
    const before = load({ SERVER_SCAN_DELAY: 180, SERVER_PORT: 3467 });
    const after = load({
      SERVER_SCAN_DELAY: 30,
      SERVER_PATH_MAPPINGS: { "/data/TV/": ["/tv/"] },
      SERVER_PORT: 4000,
      SERVER_IP: "127.0.0.1",
      PLEX_TOKEN: "new",
    });
    const changes = diffConfig(before, after);
    expect([...changes.live].sort()).toEqual(["SERVER_PATH_MAPPINGS", "SERVER_SCAN_DELAY"]);
    expect([...changes.restart].sort()).toEqual(["PLEX_TOKEN", "SERVER_IP", "SERVER_PORT"]);
  });

  it("an unchanged file changes nothing", () => {
    expect(diffConfig(load({}), load({}))).toEqual({ live: [], restart: [] });
  });
});

describe("the log level in force", () => {
  const settings = (origin: "flag" | "env" | "default") => ({ logLevel: "info" as const, origin: { logLevel: origin } });

  it("takes SERVER_LOG_LEVEL when neither --loglevel nor AUTOSCAN_LOGLEVEL is given", () => {
    expect(effectiveLogLevel(settings("default"), { SERVER_LOG_LEVEL: "debug" })).toBe("debug");
    expect(effectiveLogLevel(settings("default"), { SERVER_LOG_LEVEL: "warning" })).toBe("warn");
    expect(effectiveLogLevel(settings("default"), { SERVER_LOG_LEVEL: "" })).toBe("info");
  });

  it("lets the flag and the environment win", () => {
    expect(effectiveLogLevel(settings("env"), { SERVER_LOG_LEVEL: "debug" })).toBe("info");
    expect(effectiveLogLevel(settings("flag"), { SERVER_LOG_LEVEL: "debug" })).toBe("info");
  });
});
