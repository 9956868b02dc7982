import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { parseConfigText } from "../src/config/load.ts";
import { ConfigError } from "../src/core/errors.ts";
import { freePort } from "./support/free-port.ts";
import { runCli, startCli, type RunningCli } from "./support/run-cli.ts";
import { buildWebApp, TEST_PASS } from "./support/web-builders.ts";

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

/**
 * A base set on a running autoscan: the apps keep their old URLs until someone changes them. Those get 404 (nothing is
 * queued outside the prefix) with one WARNING naming the new URL, not a 404 per request in silence; the start line
 * and `autoscan webhook-url` carry the prefix.
 */
describe("SERVER_URL_BASE set: the old, unprefixed URLs", () => {
  const sonarr = { eventType: "Download", series: { path: "/tv/Show" }, episodeFile: { relativePath: "Season 01/e1.mkv" } };
  const post = (url: string): Promise<Response> =>
    fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(sonarr) });

  describe("the real server", () => {
    let dir: string;
    let port: number;
    let config: string;
    let server: RunningCli;

    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), "autoscan-url-base-"));
      port = await freePort();
      config = join(dir, "config.json");
      await writeFile(config, JSON.stringify({ SERVER_PASS: PASS, SERVER_IP: "127.0.0.1", SERVER_PORT: port, SERVER_URL_BASE: "/autoscan/" }));
      server = startCli(["server", "--config", config], { cwd: dir, timeoutMs: 60_000 });
      await vi.waitFor(() => {
        if (server.process.exitCode !== null) throw new Error(`the server exited:\n${server.stderr()}`);
        expect(server.stdout()).toContain("Started server");
      }, { timeout: 20_000, interval: 50 });
    }, 30_000);
    afterAll(async () => {
      if (server && server.process.exitCode === null) {
        server.process.kill("SIGTERM");
        await server.exited;
      }
      await rm(dir, { recursive: true, force: true });
    });

    it("the start line carries the prefix", () => {
      expect(server.stdout()).toContain(`Started server: http://127.0.0.1:${port}/autoscan/<SERVER_PASS>`);
    });

    it("a webhook and an API call at the old URL are answered 404 with the new path, and said in ONE warning naming the new URL", async () => {
      const old = await post(`http://127.0.0.1:${port}/${PASS}/sonarr`);
      expect(old.status).toBe(404);
      expect(await old.text()).toBe("Not found here: autoscan is served under SERVER_URL_BASE (/autoscan) now: /autoscan/<SERVER_PASS>/sonarr");
      expect((await post(`http://127.0.0.1:${port}/${PASS}`)).status).toBe(404);
      expect((await fetch(`http://127.0.0.1:${port}/api/${PASS}?cmd=queue_count`)).status).toBe(404);
      // The new URL works (the webhook is answered; nothing scans here).
      expect((await post(`http://127.0.0.1:${port}/autoscan/${PASS}/sonarr`)).status).toBe(200);
      const warnings = server.stdout().split("\n").filter((line) => line.includes("without SERVER_URL_BASE"));
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toContain(" - WARNING - WEB ");
      expect(warnings[0]).toContain(`autoscan answers at http://127.0.0.1:${port}/autoscan/<SERVER_PASS>/sonarr now`);
      expect(server.stdout()).not.toContain(PASS);
    });

    it("autoscan webhook-url prints the prefixed URLs", async () => {
      const printed = await runCli(["webhook-url", "--config", config, "--host", "nas"]);
      expect(printed.code).toBe(0);
      expect(printed.stdout.trim().split("\n")).toEqual(["sonarr", "radarr", "lidarr", "readarr"].map((app) => `http://nas:${port}/autoscan/${PASS}/${app}`));
    });
  });

  it("a wrong secret at the old URL is a plain 404 and a guess (no hint of the base); a path under the base no route takes, a plain 404", async () => {
    const { app, capture } = buildWebApp({ urlBase: "/autoscan" });
    const wrong = await app.request(`/not-the-secret/sonarr`, { method: "POST", body: "{}" });
    expect(wrong.status).toBe(404);
    expect(await wrong.text()).toBe("Not Found");
    expect(capture.text()).toContain("wrong secret");
    const under = await app.request(`/autoscan/${TEST_PASS}/a/b/c`);
    expect(under.status).toBe(404);
    expect(await under.text()).toBe("Not Found");
    expect(capture.text()).not.toContain("without SERVER_URL_BASE");
    // Without a base nothing changes: the root is autoscan's.
    const plain = buildWebApp();
    expect((await plain.app.request(`/${TEST_PASS}/sonarr`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(sonarr) })).status).toBe(200);
  });
});
