import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startConsoleService, type ConsoleService } from "./support/console-service.ts";
import { within } from "./support/run-cli.ts";

/**
 * The Scan page while `SERVER_ALLOW_MANUAL_SCAN` is false says how to turn it on. That key is live (config/reload.ts),
 * so the page must offer a reload, not a restart, and a reload must really be enough: the real server as a child
 * process, the config file edited, a real SIGHUP.
 */
let svc: ConsoleService | undefined;
afterEach(async () => {
  await svc?.stop();
  svc = undefined;
});

describe("the Scan page when it is turned off", () => {
  it("says a config reload turns it on (no restart), and a reload does", async () => {
    svc = await startConsoleService({ SERVER_ALLOW_MANUAL_SCAN: false });
    const off = await fetch(svc.base);
    expect(off.status).toBe(403);
    const text = await off.text();
    expect(text).toContain("This page is turned off");
    expect(text).toContain('<code>"SERVER_ALLOW_MANUAL_SCAN": true</code>');
    expect(text).toContain("no restart");
    expect(text).toContain("<code>docker kill -s HUP autoscan</code>");
    expect(text).toContain("<code>sudo systemctl reload autoscan</code>");
    expect(text).toContain("<code>kill -HUP &lt;pid&gt;</code>");
    // An environment variable is fixed for the life of the process: only recreating the container changes it.
    expect(text).toContain("<code>docker compose up -d</code>");
    expect(text).not.toMatch(/restart autoscan/i);

    const path = join(svc.dir, "config.json");
    const config = JSON.parse(await readFile(path, "utf8")) as Record<string, unknown>;
    await writeFile(path, JSON.stringify({ ...config, SERVER_ALLOW_MANUAL_SCAN: true }, null, 2));
    const pid = svc.child.process.pid;
    if (pid === undefined) throw new Error("the server has no pid");
    process.kill(pid, "SIGHUP");
    const base = svc.base;
    await within(
      (async () => {
        while ((await fetch(base)).status !== 200) await new Promise((resolve) => setTimeout(resolve, 100));
      })(),
      10_000,
      "the Scan page after the reload",
    );
    expect(svc.child.process.exitCode).toBeNull();
  });
});
