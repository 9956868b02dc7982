import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { freePort } from "./support/free-port.ts";
import { runCli, startCli, within, type RunningCli } from "./support/run-cli.ts";

/**
 * SERVER_PASS is the secret of every webhook URL. Under 8 characters it is found by guessing (a 4-character one in
 * about half an hour at loopback speed before guesses were slowed), so the server refuses it at start and says how
 * to make a good one; under 16 it starts and warns.
 */
let dir: string;
const running: RunningCli[] = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "autoscan-pass-"));
});

afterEach(async () => {
  for (const child of running.splice(0)) child.process.kill("SIGKILL");
  await rm(dir, { recursive: true, force: true });
});

async function configWith(pass: string, port: number): Promise<string> {
  const path = join(dir, "config.json");
  await writeFile(path, JSON.stringify({ SERVER_PASS: pass, SERVER_IP: "127.0.0.1", SERVER_PORT: port, PLEX_LOCAL_URL: "http://127.0.0.1:9", PLEX_TOKEN: "plex-token-for-tests" }));
  return path;
}

describe("a short SERVER_PASS", () => {
  it("under 8 characters: the server refuses to start, saying how to make a good one; config check says it too", async () => {
    const config = await configWith("Ab3x9", await freePort());
    const started = await runCli(["server", "--config", config, "--logfile", "none"], { timeoutMs: 15_000 });
    expect(started.code).toBe(2);
    expect(started.stderr).toContain("SERVER_PASS is 5 characters: the server needs at least 8");
    expect(started.stderr).toContain("openssl rand -hex 16");
    expect(started.stderr).not.toContain("Ab3x9");
    const checked = await runCli(["config", "check", "--config", config]);
    expect(checked.stdout + checked.stderr).toContain("SERVER_PASS is 5 characters");
  });

  it("of 8 to 15 characters: the server starts and warns once", async () => {
    const port = await freePort();
    const child = startCli(["server", "--config", await configWith("Ab3x9Kq2Lm", port), "--logfile", "none"], { timeoutMs: 60_000 });
    running.push(child);
    await within(
      (async () => {
        while (!(await fetch(`http://127.0.0.1:${port}/health`).then((r) => r.ok, () => false))) await new Promise((resolve) => setTimeout(resolve, 50));
      })(),
      20_000,
      `health (stderr: ${child.stderr()})`,
    );
    expect(child.stdout().match(/SERVER_PASS is short/g)).toHaveLength(1);
  });
});
