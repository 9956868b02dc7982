import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeTempDir } from "../../test/support/capture-log.ts";
import { ConfigError } from "../core/errors.ts";
import { loadConfig, parseConfigText } from "./load.ts";
import { upgradeConfigFile } from "./upgrade.ts";

/**
 * SERVER_DATABASE_URL and SERVER_LEASE_SECONDS: defaults, validation (a bad URL is described with its password as
 * `***`, never in clear), the environment override (a URL stays text), SERVER_DATABASE_URL_FILE (Docker secrets: the
 * file wins over config.json; set together with SERVER_DATABASE_URL it is an error, as in the postgres image), and
 * `config upgrade` leaving both keys out of a working file.
 */
const PASS = "s3cr3t-Pa55word";
const FILE = { SERVER_PASS: "0123456789abcdef0123" };
const load = (file: Record<string, unknown>, env: Record<string, string> = {}) =>
  parseConfigText(JSON.stringify({ ...FILE, ...file }), "/x/config.json", env);

function problemsOf(run: () => unknown): readonly string[] {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).problems;
  }
  throw new Error("the config was accepted");
}

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => ({ dir, cleanup } = await makeTempDir("autoscan-dburl-")));
afterEach(() => cleanup());

describe("SERVER_DATABASE_URL and SERVER_LEASE_SECONDS", () => {
  it("default to the embedded queue and a 15 s lease", () => {
    const { config } = load({});
    expect(config.SERVER_DATABASE_URL).toBe("");
    expect(config.SERVER_LEASE_SECONDS).toBe(15);
  });

  it.each([
    `postgres://autoscan:${PASS}@db:5432/autoscan`,
    `postgresql://autoscan:${PASS}@db/autoscan`,
    "postgres://autoscan@10.0.0.5/queue?sslmode=require",
    "postgres://autoscan:p%40ss%2Fword@[::1]:6432/autoscan",
    "postgres://autoscan@localhost/autoscan?host=/var/run/postgresql",
  ])("accepts %s", (url) => {
    expect(load({ SERVER_DATABASE_URL: url }).config.SERVER_DATABASE_URL).toBe(url);
  });

  it.each([
    [`mysql://autoscan:${PASS}@db/autoscan`, /expected a postgres:\/\/ or postgresql:\/\/ URL.*found "mysql:\/\/autoscan:\*\*\*@db\/autoscan"/],
    [`postgres://autoscan:${PASS}@db:5432`, /the URL "postgres:\/\/autoscan:\*\*\*@db:5432" names no database/],
    [`postgres://autoscan:${PASS}@db:5432/`, /names no database/],
    [`db:5432/autoscan`, /expected a postgres:\/\/ or postgresql:\/\/ URL/],
    [`autoscan:${PASS}@db/autoscan`, /expected a postgres:\/\/ or postgresql:\/\/ URL.*found "\*\*\*@db\/autoscan"/],
    [`postgres://autoscan:${PASS}@db:99999/autoscan`, /expected a URL such as postgres:\/\/autoscan:PASSWORD@postgres:5432\/autoscan, found "postgres:\/\/autoscan:\*\*\*@db:99999\/autoscan".*percent-encoded/],
    [`postgres://autoscan:${PASS}/x@db/autoscan`, /found "postgres:\/\/autoscan:\*\*\*@db\/autoscan"/],
  ])("refuses %s, saying what is wrong and never showing the password", (url, message) => {
    const problems = problemsOf(() => load({ SERVER_DATABASE_URL: url }));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^SERVER_DATABASE_URL: /);
    expect(problems[0]).toMatch(message);
    expect(problems[0]).not.toContain(PASS);
  });

  it("refuses a value that is not text without echoing it", () => {
    const problems = problemsOf(() => load({ SERVER_DATABASE_URL: { url: `postgres://a:${PASS}@db/x` } }));
    expect(problems[0]).toMatch(/SERVER_DATABASE_URL: expected a string: a PostgreSQL URL.*found a object \(value hidden\)/);
    expect(problems[0]).not.toContain(PASS);
  });

  it.each([
    [4, /at least 5/],
    [601, /at most 600/],
    [7.5, /whole number/],
    ["15", /whole number \(no quotes\)/],
  ])("SERVER_LEASE_SECONDS refuses %j", (value, message) => {
    expect(problemsOf(() => load({ SERVER_LEASE_SECONDS: value }))[0]).toMatch(message);
  });

  it("take the environment's value; a URL stays text and its note hides the password", () => {
    const url = `postgres://autoscan:${PASS}@db:5432/autoscan`;
    const loaded = load({ SERVER_DATABASE_URL: "" }, { SERVER_DATABASE_URL: url, SERVER_LEASE_SECONDS: "30" });
    expect(loaded.config.SERVER_DATABASE_URL).toBe(url);
    expect(loaded.config.SERVER_LEASE_SECONDS).toBe(30);
    expect(loaded.notes).toContain("Using ENV setting SERVER_DATABASE_URL=postgres://autoscan:***@db:5432/autoscan");
    expect(loaded.notes.join("\n")).not.toContain(PASS);
  });

  it("a bad URL from the environment names the variable and hides the password", () => {
    const problems = problemsOf(() => load({}, { SERVER_DATABASE_URL: `postgres://autoscan:${PASS}@db` }));
    expect(problems[0]).toMatch(/^SERVER_DATABASE_URL \(from environment variable SERVER_DATABASE_URL\): the URL "postgres:\/\/autoscan:\*\*\*@db" names no database/);
  });
});

describe("SERVER_DATABASE_URL_FILE (Docker secrets)", () => {
  const URL_IN_FILE = `postgres://autoscan:${PASS}@postgres:5432/autoscan`;

  function writeCase(config: Record<string, unknown> = {}): string {
    const path = join(dir, "config.json");
    writeFileSync(path, JSON.stringify({ ...FILE, ...config }));
    return path;
  }

  async function loadWith(env: Record<string, string>, config: Record<string, unknown> = {}) {
    const loaded = await loadConfig(writeCase(config), env, false);
    if (loaded.kind !== "loaded") throw new Error("not loaded");
    return loaded;
  }

  async function errorOf(env: Record<string, string>): Promise<ConfigError> {
    const error = await loadConfig(writeCase(), env, false).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }

  it("reads the URL from the file, trimmed, over config.json's value, and says where it came from", async () => {
    const secret = join(dir, "database-url");
    writeFileSync(secret, `  ${URL_IN_FILE}\n\n`);
    const loaded = await loadWith({ SERVER_DATABASE_URL_FILE: secret }, { SERVER_DATABASE_URL: "postgres://other@elsewhere/db" });
    expect(loaded.config.SERVER_DATABASE_URL).toBe(URL_IN_FILE);
    expect(loaded.notes).toContain(`Using SERVER_DATABASE_URL from ${secret} (SERVER_DATABASE_URL_FILE)`);
  });

  it("ignores an empty SERVER_DATABASE_URL_FILE (compose's ${X:-})", async () => {
    expect((await loadWith({ SERVER_DATABASE_URL_FILE: "" })).config.SERVER_DATABASE_URL).toBe("");
  });

  it("refuses both SERVER_DATABASE_URL and SERVER_DATABASE_URL_FILE, as the postgres image does", async () => {
    const secret = join(dir, "database-url");
    writeFileSync(secret, URL_IN_FILE);
    const error = await errorOf({ SERVER_DATABASE_URL_FILE: secret, SERVER_DATABASE_URL: URL_IN_FILE });
    expect(error.message).toBe("Both SERVER_DATABASE_URL and SERVER_DATABASE_URL_FILE are set in the environment.");
    expect(error.problems.join(" ")).toMatch(/set only one of them/);
  });

  it("names the variable and the path when the file is missing, a folder, unreadable or empty", async () => {
    const missing = join(dir, "nope");
    expect((await errorOf({ SERVER_DATABASE_URL_FILE: missing })).message).toBe(
      `SERVER_DATABASE_URL_FILE names ${missing}, but it does not exist.`,
    );
    const folder = join(dir, "folder");
    mkdirSync(folder);
    expect((await errorOf({ SERVER_DATABASE_URL_FILE: folder })).message).toBe(
      `SERVER_DATABASE_URL_FILE names ${folder}, but it is a folder, not a file.`,
    );
    const empty = join(dir, "empty");
    writeFileSync(empty, " \n");
    expect((await errorOf({ SERVER_DATABASE_URL_FILE: empty })).message).toBe(
      `SERVER_DATABASE_URL_FILE names ${empty}, but that file is empty.`,
    );
    if (process.getuid?.() !== 0) {
      const locked = join(dir, "locked");
      writeFileSync(locked, URL_IN_FILE);
      chmodSync(locked, 0o000);
      expect((await errorOf({ SERVER_DATABASE_URL_FILE: locked })).message).toMatch(
        new RegExp(`^SERVER_DATABASE_URL_FILE names ${locked}, but autoscan's user \\(uid \\d+\\) may not read it\\.$`),
      );
    }
  });

  it("a bad URL in the file names the file and hides the password", async () => {
    const secret = join(dir, "database-url");
    writeFileSync(secret, `postgres://autoscan:${PASS}@postgres:5432\n`);
    const error = await errorOf({ SERVER_DATABASE_URL_FILE: secret });
    expect(error.problems[0]).toBe(
      `SERVER_DATABASE_URL (from the file ${secret}, named by SERVER_DATABASE_URL_FILE): the URL "postgres://autoscan:***@postgres:5432" names no database ` +
        "(the path after the host, e.g. …:5432/autoscan): write it as postgres://autoscan:PASSWORD@postgres:5432/autoscan.",
    );
  });
});

describe("config upgrade", () => {
  it("does not add SERVER_DATABASE_URL or SERVER_LEASE_SECONDS to a working file (opt-in, like TARGETS and ARR)", async () => {
    const path = join(dir, "config.json");
    writeFileSync(path, JSON.stringify({ SERVER_PASS: "0123456789abcdef0123", SERVER_PORT: 3468 }));
    const result = await upgradeConfigFile(path);
    const upgraded = JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
    expect(upgraded).not.toHaveProperty("SERVER_DATABASE_URL");
    expect(upgraded).not.toHaveProperty("SERVER_LEASE_SECONDS");
    expect(result.added.join("\n")).not.toMatch(/SERVER_DATABASE_URL|SERVER_LEASE_SECONDS/);
  });

  it("keeps them when the file has them", async () => {
    const path = join(dir, "config.json");
    const url = `postgres://autoscan:${PASS}@db/autoscan`;
    writeFileSync(path, JSON.stringify({ SERVER_PASS: "0123456789abcdef0123", SERVER_DATABASE_URL: url, SERVER_LEASE_SECONDS: 30 }));
    await upgradeConfigFile(path);
    const upgraded = JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
    expect(upgraded.SERVER_DATABASE_URL).toBe(url);
    expect(upgraded.SERVER_LEASE_SECONDS).toBe(30);
  });
});
