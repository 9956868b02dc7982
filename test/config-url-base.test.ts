import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseConfigText } from "../src/config/load.ts";
import { ConfigError } from "../src/core/errors.ts";
import { runCli } from "./support/run-cli.ts";

/**
 * SERVER_URL_BASE is the path prefix every route is served under. A `.` or `..` segment is one no client keeps (URLs
 * are normalised before they are sent), so a server under it answered 404 to everything while it said it was healthy.
 */
const PASS = "0123456789abcdef0123";

function urlBaseProblems(base: string): readonly string[] {
  try {
    parseConfigText(JSON.stringify({ SERVER_PASS: PASS, SERVER_URL_BASE: base }), "/srv/autoscan/config.json", {});
    return [];
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).problems;
  }
}

describe("SERVER_URL_BASE", () => {
  it.each(["/..", "/.", "/a/../b", "/autoscan/.", "/./autoscan"])("refuses %s: a . or .. segment", (base) => {
    expect(urlBaseProblems(base)).toEqual([expect.stringMatching(/^SERVER_URL_BASE: .*no "\." or "\.\." segments/)]);
  });

  it.each(["", "/", "/autoscan", "/apps/autoscan", "/a.b/..c/v1.2", "/autoscan/"])("takes %s", (base) => {
    expect(urlBaseProblems(base)).toEqual([]);
  });

  it("config check fails on it, naming the key", async () => {
    const dir = await mkdtemp(join(tmpdir(), "autoscan-url-base-"));
    try {
      const config = join(dir, "config.json");
      await writeFile(config, JSON.stringify({ SERVER_PASS: PASS, SERVER_URL_BASE: "/a/../b" }));
      const checked = await runCli(["config", "check", "--config", config]);
      expect(checked.code).not.toBe(0);
      expect(checked.stdout + checked.stderr).toContain("SERVER_URL_BASE");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
