import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { makeTempDir } from "./support/capture-log.ts";
import { runCli } from "./support/run-cli.ts";

/**
 * `autoscan webhook-url` through the real entry point: the URL to paste into each *arr app (stdout, one per line) and
 * where to paste it and which events to tick (stderr), from the config's SERVER_PASS, SERVER_PORT and ARR.
 */
const PASS = "w3bh00kw3bh00kw3bh00kw3bh00k0000";
const cleanups: (() => Promise<void>)[] = [];
afterAll(() => Promise.all(cleanups.map((cleanup) => cleanup())));

async function config(values: Record<string, unknown>): Promise<string> {
  const { dir, cleanup } = await makeTempDir("autoscan-webhook-url-");
  cleanups.push(cleanup);
  const path = join(dir, "config.json");
  writeFileSync(path, JSON.stringify(values));
  return path;
}

const ARR = {
  sonarr: { TYPE: "sonarr", URL: "http://sonarr:8989", API_KEY: "0123456789abcdef0123456789abcdef" },
  "radarr 4k": { TYPE: "radarr", URL: "http://radarr4k:7878", API_KEY: "0123456789abcdef0123456789abcdef" },
};

describe.concurrent("autoscan webhook-url", () => {
  it("prints one URL per ARR app on stdout, and where to paste them and the events to tick on stderr", async () => {
    const path = await config({ SERVER_PASS: PASS, SERVER_PORT: 3500, ARR });
    const result = await runCli(["webhook-url", "--config", path, "--host", "nas.lan"]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe(`http://nas.lan:3500/${PASS}/sonarr\nhttp://nas.lan:3500/${PASS}/radarr%204k\n`);
    expect(result.stderr).toContain("Settings → Connect → + → Webhook");
    expect(result.stderr).toContain("sonarr: tick On File Import, On File Upgrade, On Rename, On Series Delete, On Episode File Delete");
    expect(result.stderr).toContain("radarr 4k: tick On File Import, On File Upgrade, On Rename, On Movie Delete, On Movie File Delete");
  });

  it("defaults the host to the compose service name in a container, else this machine's address; one URL per kind of app without ARR", async () => {
    const path = await config({ SERVER_PASS: PASS });
    const result = await runCli(["webhook-url", "--config", path]);
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.trim().split("\n");
    expect(lines.map((line) => line.slice(line.lastIndexOf("/") + 1))).toEqual(["sonarr", "radarr", "lidarr", "readarr"]);
    for (const line of lines) expect(line).toMatch(new RegExp(`^http://(autoscan|\\d+\\.\\d+\\.\\d+\\.\\d+|localhost):3467/${PASS}/\\w+$`));
  });

  it("--app gives just that app's URL (a name of one's own too), and takes a whole address behind a proxy", async () => {
    const path = await config({ SERVER_PASS: PASS, ARR });
    const one = await runCli(["webhook-url", "--config", path, "--app", "radarr 4k", "--host", "autoscan"]);
    expect(one.stdout).toBe(`http://autoscan:3467/${PASS}/radarr%204k\n`);
    const proxied = await runCli(["webhook-url", "--config", path, "--app", "sonarr-anime", "--host", "https://media.example.org/autoscan/"]);
    expect(proxied.stdout).toBe(`https://media.example.org/autoscan/${PASS}/sonarr-anime\n`);
    expect(proxied.stderr).toContain("sonarr-anime: tick On File Import");
  });

  it("says what is wrong with a bad --host or --app, or a missing SERVER_PASS (exit 2)", async () => {
    const good = await config({ SERVER_PASS: PASS });
    const host = await runCli(["webhook-url", "--config", good, "--host", "ftp://nas"]);
    expect(host.code).toBe(2);
    expect(host.stderr).toContain('--host "ftp://nas": only http:// and https:// addresses work.');
    const app = await runCli(["webhook-url", "--config", good, "--app", "a/b"]);
    expect(app.code).toBe(2);
    expect(app.stderr).toContain('--app "a/b" is not a usable name');
    const noPass = await runCli(["webhook-url", "--config", await config({})]);
    expect(noPass.code).toBe(2);
    expect(noPass.stderr).toContain("SERVER_PASS");
    expect(noPass.stdout).toBe("");
  });
});
