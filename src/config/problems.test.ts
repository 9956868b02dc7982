import { describe, expect, it } from "vitest";
import { ConfigError } from "../core/errors.ts";
import { parseConfigText, requireServerPass } from "./load.ts";

const PASS = "0123456789abcdef0123";

/** The ConfigError thrown for `raw` (fails the test when the config is accepted). */
function problemsOf(raw: unknown, env: Record<string, string> = {}, text = JSON.stringify(raw, null, 2)): ConfigError {
  try {
    parseConfigText(text, "/srv/autoscan/config.json", env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error("the config was accepted");
}

describe("validation", () => {
  it("reports every problem at once, each with its key path, what was expected and what was found", () => {
    const error = problemsOf({
      SERVER_PASS: PASS,
      SERVER_PORT: "3468",
      USE_DOCKER: "yes",
      PLEX_ANALYZE_TYPE: "fast",
      SERVER_IGNORE_LIST: ["/.grab/", 3],
      SERVER_SCAN_PRIORITIES: { high: ["/Movies/"] },
      CLOUD: { POLL_INTERVAL: -1 },
      RCLONE: { RC_CACHE_REFRESH: { ENABLED: "false" } },
    });
    expect(error.message).toBe("/srv/autoscan/config.json has 7 problems:");
    expect([...error.problems].sort()).toEqual(
      [
        'SERVER_PORT: expected a whole number (no quotes), found "3468".',
        'USE_DOCKER: expected true or false (no quotes), found "yes".',
        'PLEX_ANALYZE_TYPE: expected one of "off", "basic", "deep", found "fast".',
        "SERVER_IGNORE_LIST[1]: expected a string, found 3.",
        'SERVER_SCAN_PRIORITIES.high: expected a whole number as the key, e.g. "0".',
        "CLOUD.POLL_INTERVAL: expected a number of at least 5, found -1.",
        'RCLONE.RC_CACHE_REFRESH.ENABLED: expected true or false (no quotes), found "false".',
      ].sort(),
    );
  });

  it("names the nearest known key for an unknown one", () => {
    expect(problemsOf({ SERVER_PASS: PASS, SERVER_PATH_MAPPING: {} }).problems).toEqual([
      'Unknown key "SERVER_PATH_MAPPING" — did you mean "SERVER_PATH_MAPPINGS"?',
    ]);
  });

  it("names the nearest known key inside a section, with the section's path", () => {
    expect(problemsOf({ SERVER_PASS: PASS, CLOUD: { ALLOWED: { FILE_PATH: [] } } }).problems).toEqual([
      'Unknown key "FILE_PATH" in "CLOUD.ALLOWED" — did you mean "FILE_PATHS"?',
    ]);
    expect(problemsOf({ SERVER_PASS: PASS, RCLONE: { RC_CACHE_REFRESH: { RCURL: "x" } } }).problems).toEqual([
      'Unknown key "RCURL" in "RCLONE.RC_CACHE_REFRESH" — did you mean "RC_URL"?',
    ]);
  });

  it("finds the nearest key whatever the case", () => {
    expect(problemsOf({ SERVER_PASS: PASS, server_port: 3468 }).problems).toEqual([
      'Unknown key "server_port" — did you mean "SERVER_PORT"?',
    ]);
  });

  it("says to remove an unknown key that is near nothing", () => {
    expect(problemsOf({ SERVER_PASS: PASS, XYZZY: 1 }).problems).toEqual([
      'Unknown key "XYZZY" — remove it, or see docs/configuration.md for the known keys.',
    ]);
  });

  it("reports every unknown key, not only the first of each section", () => {
    const problems = problemsOf({
      SERVER_PASS: PASS,
      SERVER_PATH_MAPPING: {},
      SERVER_SCAN_DELAYS: 10,
      CLOUD: { ENABLE: true, POLL_INTERVALL: 60 },
    }).problems;
    expect(problems).toHaveLength(4);
    expect(problems.join("\n")).toContain('"SERVER_SCAN_DELAYS" — did you mean "SERVER_SCAN_DELAY"?');
    expect(problems.join("\n")).toContain('"POLL_INTERVALL" in "CLOUD" — did you mean "POLL_INTERVAL"?');
  });

  it("reports unknown keys and wrong values together", () => {
    const problems = problemsOf({ SERVER_PASS: PASS, SERVER_PATH_MAPPING: {}, SERVER_PORT: 0 }).problems;
    expect(problems).toHaveLength(2);
    expect(problems).toContain("SERVER_PORT: expected a number of at least 1, found 0.");
  });

  it("loads a file without SERVER_PASS (only the server needs it), and the server's check says plainly what is missing", () => {
    for (const raw of [{ SERVER_PORT: 3468 }, { SERVER_PASS: "" }]) {
      const loaded = parseConfigText(JSON.stringify(raw), "/srv/autoscan/config.json", {});
      expect(loaded.config.SERVER_PASS).toBe("");
      expect(loaded.warnings).toEqual([]);
      const error = (() => {
        try {
          requireServerPass(loaded);
        } catch (thrown) {
          return thrown;
        }
        return undefined;
      })();
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).message).toBe("/srv/autoscan/config.json has 1 problem:");
      expect((error as ConfigError).problems).toEqual([
        expect.stringMatching(/^SERVER_PASS: this key is required to run the server .* Run 'autoscan config upgrade' to add a random one\.$/),
      ]);
    }
    expect(() => requireServerPass(parseConfigText(JSON.stringify({ SERVER_PASS: PASS }), "/x.json", {}))).not.toThrow();
  });

  it("in a GOOGLE section, names the key path as the user wrote it", () => {
    const problems = problemsOf({ SERVER_PASS: PASS, GOOGLE: { POLL_INTERVAL: "60", ALLOWED: { FILE_PATH: [] } } }).problems;
    expect(problems).toHaveLength(2);
    expect(problems.join("\n")).toContain('GOOGLE.POLL_INTERVAL: expected a whole number (no quotes), found "60".');
    expect(problems.join("\n")).toContain('Unknown key "FILE_PATH" in "GOOGLE.ALLOWED" — did you mean "FILE_PATHS"?');
  });

  it("rejects a PLEX_LOCAL_URL that is not an http(s) URL", () => {
    const problems = problemsOf({ SERVER_PASS: PASS, PLEX_LOCAL_URL: "localhost:32400" }).problems;
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^PLEX_LOCAL_URL: expected .*found "localhost:32400"\.$/);
  });

  it("rejects a SERVER_PASS that cannot be one URL path segment", () => {
    const problems = problemsOf({ SERVER_PASS: "a/b" }).problems;
    expect(problems).toEqual([expect.stringMatching(/^SERVER_PASS: expected no spaces and none of \/ \? # %/)]);
  });

  it("never echoes a secret's value in a problem (the lines reach the terminal and docker logs)", () => {
    const problems = problemsOf({
      SERVER_PASS: "my secret pass",
      PLEX_TOKEN: ["plexTokenInAList1"],
      CLOUD: { CLIENT_SECRET: { value: "GOCSPX-clientSecretInObject" } },
      SERVER_AUTH_PASSWORD: 987654321012,
    }).problems;
    expect(problems).toHaveLength(4);
    const text = problems.join("\n");
    for (const secret of ["my secret pass", "plexTokenInAList1", "GOCSPX-clientSecretInObject", "987654321012"]) {
      expect(text).not.toContain(secret);
    }
  });

  describe("invalid JSON", () => {
    it.each([
      ["a trailing comma", '{\n  "SERVER_PASS": "x",\n}\n', 3, 1],
      ["a missing comma", '{\n  "SERVER_PASS": "x"\n  "SERVER_PORT": 3468\n}\n', 3, 3],
      ["a comment", '{\n  // my server\n  "SERVER_PASS": "x"\n}\n', 2, 3],
      ["text after the object", '{\n  "SERVER_PASS": "x"\n}\n}\n', 4, 1],
      ["Python's True", '{\n  "SERVER_PASS": "x",\n  "USE_DOCKER": True\n}\n', 3, 17],
      ["single quotes", "{\n  \"SERVER_PASS\": 'x'\n}\n", 2, 18],
      ["a cut-off file", '{\n  "SERVER_PASS": "x",\n  "SERVER_PORT": 34', 3, 20],
    ])("reports the line and column of %s", (_what, text, line, column) => {
      const error = problemsOf(undefined, {}, text);
      expect(error.message).toContain(`/srv/autoscan/config.json is not valid JSON at line ${line}, column ${column}`);
      expect(error.problems.join("\n")).toContain(`line ${line}, column ${column}`);
    });
  });
});
