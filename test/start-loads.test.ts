import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { makeTempDir } from "./support/capture-log.ts";
import { freePort } from "./support/free-port.ts";
import { runCli, startCli } from "./support/run-cli.ts";

/**
 * What a start loads: `autoscan server` with the default config (`config init`, then only a port of its own) loads
 * none of the libraries that only some setups use: Google's clients (Drive monitoring), the PostgreSQL driver
 * (SERVER_DATABASE_URL), prom-client (SERVER_METRICS), dockerode (the scanner in the Plex container), nor our modules
 * for them. (Node's child processes are loaded: every look at a disk runs in a helper process of its mount, see
 * src/paths/mount-looker.ts, and the start-up checks look at the data folder.) Read from the modules the process actually loaded (a `node --import` hook), not from the source.
 */
const HOOK = fileURLToPath(new URL("./support/record-loads.mjs", import.meta.url));

const NOT_AT_A_DEFAULT_START = [
  /\/node_modules\/@googleapis\//,
  /\/node_modules\/google-auth-library\//,
  /\/node_modules\/googleapis-common\//,
  /\/node_modules\/gaxios\//,
  /\/node_modules\/pg\//,
  /\/node_modules\/pg-pool\//,
  /\/node_modules\/prom-client\//,
  /\/node_modules\/dockerode\//,
  /\/node_modules\/docker-modem\//,
  /\/src\/drive\//,
  /\/src\/cluster\//,
  /\/src\/docker\//,
  /\/src\/backfill\//,
  /\/src\/ops\/metrics\//,
  /\/src\/queue\/postgres\/pg-/,
  /\/src\/cli\/commands\/(?!server\.ts|index\.ts)/,
];

let temp: Awaited<ReturnType<typeof makeTempDir>>;
beforeEach(async () => {
  temp = await makeTempDir();
});
afterEach(() => temp.cleanup());

describe("a start loads only what the setup uses", () => {
  it("autoscan server with the default config loads no Drive, PostgreSQL, metrics or Docker code", async () => {
    const configPath = join(temp.dir, "config", "config.json");
    const init = await runCli(["config", "init", "--config", configPath]);
    expect(init.code, init.stderr).toBe(0);
    const port = await freePort();
    const config = JSON.parse(await readFile(configPath, "utf8")) as Record<string, unknown>;
    await writeFile(configPath, JSON.stringify({ ...config, SERVER_IP: "127.0.0.1", SERVER_PORT: port }, null, 2));

    const loads = join(temp.dir, "loads.txt");
    const server = startCli(["server", "--config", configPath, "--data-dir", join(temp.dir, "data")], {
      nodeArgs: ["--import", HOOK],
      env: { AUTOSCAN_TEST_LOADS: loads },
      timeoutMs: 30_000,
    });
    try {
      await waitForHealth(port, server.stderr);
      // The start-up checks run just after the start: let them finish too.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    } finally {
      server.process.kill("SIGTERM");
      await server.exited;
    }
    const loaded = (await readFile(loads, "utf8")).split("\n").filter(Boolean);
    expect(loaded.some((url) => url.includes("/node_modules/sql.js/")), "the queue's sql.js was loaded").toBe(true);
    const unexpected = loaded.filter((url) => NOT_AT_A_DEFAULT_START.some((pattern) => pattern.test(url)));
    expect(unexpected).toEqual([]);
  }, 40_000);

  it("autoscan health loads only its own command module", async () => {
    const loads = join(temp.dir, "loads.txt");
    const port = await freePort();
    const result = await runCli(["health", "--timeout", "1"], {
      nodeArgs: ["--import", HOOK],
      env: { AUTOSCAN_TEST_LOADS: loads, SERVER_PORT: String(port), SERVER_PASS: "0123456789abcdef0123456789abcdef" },
    });
    expect(result.code).not.toBe(0);
    const loaded = (await readFile(loads, "utf8")).split("\n").filter(Boolean);
    const commands = loaded.filter((url) => url.includes("/src/cli/commands/") && !url.endsWith("/index.ts"));
    expect(commands.map((url) => url.replace(/.*\/commands\//, ""))).toEqual(["health.ts"]);
    expect(loaded.filter((url) => /\/node_modules\/(sql\.js|hono|@hono)\//.test(url))).toEqual([]);
  });
});

async function waitForHealth(port: number, output: () => string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const status = await fetch(`http://127.0.0.1:${String(port)}/health`).then((r) => r.status, () => 0);
    if (status !== 0) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the server did not answer on port ${String(port)}\n${output()}`);
}
