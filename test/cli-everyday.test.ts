import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { makeTempDir } from "./support/capture-log.ts";
import { startFakeNotifyReceiver } from "./support/fake-notify-receiver.ts";
import { startFakePlex } from "./support/fake-plex.ts";
import { runCli } from "./support/run-cli.ts";

/**
 * The CLI as people use it, through the real entry point (`node src/cli/main.ts …`): commands that do not serve run
 * without SERVER_PASS (only the server refuses), `scan` names the real fix when the scanner is not on this host, and
 * `authorize` without a terminal says to add `-it`. Every test is one or two child processes, run concurrently.
 */
const cleanups: (() => Promise<void>)[] = [];
afterAll(() => Promise.all(cleanups.map((cleanup) => cleanup())));

async function folder(): Promise<{ configPath: string; cwd: string; write: (config: Record<string, unknown>) => void }> {
  const { dir, cleanup } = await makeTempDir("autoscan-cli-everyday-");
  cleanups.push(cleanup);
  const cwd = join(dir, "cwd");
  mkdirSync(cwd);
  const configPath = join(dir, "config.json");
  return { configPath, cwd, write: (config) => writeFileSync(configPath, `${JSON.stringify(config, null, 2)}\n`) };
}

describe.concurrent("without SERVER_PASS", () => {
  it("the server refuses to start, naming the key and the fix (exit 2); absent and empty alike", async () => {
    const absent = await folder();
    absent.write({ SERVER_IP: "127.0.0.1" });
    const empty = await folder();
    empty.write({ SERVER_PASS: "", SERVER_IP: "127.0.0.1" });
    const results = await Promise.all([absent, empty].map((f) => runCli(["server", "--config", f.configPath], { cwd: f.cwd })));
    for (const [index, result] of results.entries()) {
      const { configPath, cwd } = [absent, empty][index] as Awaited<ReturnType<typeof folder>>;
      expect(result.code).toBe(2);
      expect(result.stdout).toBe("");
      expect(result.stderr).toBe(
        `autoscan: ${configPath} has 1 problem:\n` +
          "  - SERVER_PASS: this key is required to run the server (it is the secret in every webhook URL) and it is missing or empty. " +
          "Run 'autoscan config upgrade' to add a random one.\n",
      );
      expect(readdirSync(cwd)).toEqual([]);
    }
  });

  it("config check passes with a warning that the server needs it", async () => {
    const { configPath, write } = await folder();
    write({ PLEX_TOKEN: "plexTokenEveryday1" });
    const result = await runCli(["config", "check", "--config", configPath]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("Listening on:    (none: the server does not start until SERVER_PASS is set)");
    expect(result.stderr).toMatch(/^warning: SERVER_PASS: this key is required to run the server .*config upgrade/m);
    expect(result.stderr).toContain(`${configPath} is valid (1 warning(s)).`);
  });

  it("scan runs (here: --dry-run prints the plan)", async () => {
    const { configPath, write } = await folder();
    write({ USE_SUDO: false });
    const result = await runCli(["scan", "/data/Movies/Heat (1995)", "--section", "1", "--dry-run", "--config", configPath]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("Would run in this host:");
    expect(result.stdout).toContain('"--section","1","--directory","/data/Movies/Heat (1995)"]');
  });

  it("sections lists Plex's libraries", async () => {
    const plex = await startFakePlex({ sections: [{ key: "1", title: "Movies", type: "movie", locations: ["/data/Movies"] }] });
    try {
      const { configPath, write } = await folder();
      write({ PLEX_LOCAL_URL: plex.url, PLEX_TOKEN: plex.token });
      const result = await runCli(["sections", "--config", configPath]);
      expect(result.code).toBe(0);
      expect(result.stdout).toContain("  1: Movies\n      /data/Movies/\n");
    } finally {
      await plex.close();
    }
  });
});

describe.concurrent("one-shot commands: the result on stdout, nothing on stderr when all is well", () => {
  it("sections and notify test with the settings in the environment, as the compose file gives them: no INFO line; --loglevel INFO brings the notes back", async () => {
    const plex = await startFakePlex({ sections: [{ key: "1", title: "Movies", type: "movie", locations: ["/data/Movies"] }] });
    const receiver = await startFakeNotifyReceiver();
    try {
      const { configPath, write } = await folder();
      write({ NOTIFY: { phone: { TYPE: "webhook", URL: `${receiver.url}/hook` } } });
      const env = { PLEX_LOCAL_URL: plex.url, PLEX_TOKEN: plex.token };
      const [sections, notify, asked] = await Promise.all([
        runCli(["sections", "--config", configPath], { env }),
        runCli(["notify", "test", "--config", configPath], { env }),
        runCli(["sections", "--config", configPath, "--loglevel", "INFO"], { env }),
      ]);
      expect(sections.stdout).toContain("  1: Movies\n");
      expect(notify.stdout).toMatch(/^✓ phone: test message delivered/);
      for (const result of [sections, notify]) {
        expect(result.code).toBe(0);
        expect(result.stderr).toBe("");
      }
      expect(asked.stderr).toContain("INFO - AUTOSCAN");
      expect(asked.stderr).toContain("Using ENV setting PLEX_LOCAL_URL");
    } finally {
      await Promise.all([plex.close(), receiver.close()]);
    }
  });
});

describe.concurrent("autoscan scan on a host without Plex Media Scanner (USE_DOCKER false, the default)", () => {
  it.each([
    ["with --section", ["--section", "1"]],
    ["finding the section through the scanner", []],
  ])("%s: exit 127, and the fix is USE_DOCKER and DOCKER_NAME, not a preset nobody chose", async (_, extra) => {
    const { configPath, write } = await folder();
    // USE_SUDO false keeps the run the same on hosts with and without sudo: /usr/bin/env finds no scanner.
    write({ USE_SUDO: false, PLEX_SCANNER: "/nonexistent/plexmediaserver/Plex Media Scanner" });
    const result = await runCli(["scan", "/data/Movies/Heat (1995)", ...extra, "--config", configPath]);
    expect(result.code).toBe(127);
    expect(result.stderr).toMatch(/^autoscan scan: Could not run "\/nonexistent\/plexmediaserver\/Plex Media Scanner" \(this host, /m);
    expect(result.stderr).toContain(
      "If Plex runs in Docker, set USE_DOCKER to true and DOCKER_NAME to the Plex container's name; " +
        "if Plex is installed on this host, set PLEX_SCANNER to the scanner's path.",
    );
    expect(result.stderr).not.toContain("PLEX_DOCKER_PRESET");
  });

  it("takes the folder as --directory or as the one argument, not both", async () => {
    const { configPath, write } = await folder();
    write({ USE_SUDO: false });
    const both = await runCli(["scan", "/a", "--directory", "/b", "--config", configPath]);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('autoscan scan: expected one folder, got "/b" and "/a"');
    expect(both.stderr).toContain("Usage: autoscan scan [--directory] PATH");
  });
});

describe.concurrent("autoscan authorize without a terminal (docker exec without -it)", () => {
  it("says to add -it and exits 2 before printing a link; no SERVER_PASS needed", async () => {
    const { configPath, write } = await folder();
    write({ CLOUD: { ENABLED: true, CLIENT_ID: "555-desktop.apps.googleusercontent.com", CLIENT_SECRET: "GOCSPX-everyday" } });
    // runCli's stdin is /dev/null, which is what the process gets from `docker exec` without -i.
    const result = await runCli(["authorize", "--config", configPath]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain("In Docker, add -it: docker exec -it autoscan autoscan authorize");
    expect(result.stderr).not.toContain("http");
  });
});
