import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../config/load.ts";
import type { Config } from "../config/schema.ts";
import { captureLog, makeTempDir } from "../../test/support/capture-log.ts";
import { createConfigReloader } from "./reload.ts";

/**
 * The SIGHUP reloader on a real config file and the real loader: what each reload logs. A key that needs a restart
 * (WATCH here) is announced once, when it is changed, and not again as a new warning at each later reload.
 */
const PASS = "0123456789abcdef0123456789abcdef";
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => void (await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()))));

async function setup() {
  const { dir, cleanup } = await makeTempDir("autoscan-reloader-");
  cleanups.push(cleanup);
  const path = join(dir, "config.json");
  const write = (extra: Record<string, unknown>) => writeFile(path, JSON.stringify({ SERVER_PASS: PASS, ...extra }));
  await write({ WATCH: { tv: { PATHS: ["/mnt/tv"], MODE: "events" } } });
  const loaded = await loadConfig(path, {}, false);
  if (loaded.kind !== "loaded") throw new Error("not loaded");
  const capture = captureLog("info");
  const applied: Config[] = [];
  const reloader = createConfigReloader({ settings: { configPath: path }, env: {}, initial: loaded.config, apply: (next) => applied.push(next), log: capture.log });
  return { write, reloader, capture, applied };
}

describe("config reload: each warning once per reload", () => {
  it("a changed WATCH is warned about at the reload that changed it; later reloads name it once as still waiting, never as a new warning", async () => {
    const { write, reloader, capture, applied } = await setup();
    await write({ WATCH: { tv: { PATHS: ["/mnt/tv"], MODE: "poll" } } });
    await reloader.reload();
    const warnings = () => capture.records.filter((record) => record.level === 40).map((record) => record.msg);
    expect(warnings()).toEqual([expect.stringMatching(/^Config changed WATCH, which only take\(s\) effect after a restart .*stay until then\.$/)]);
    expect(applied.at(-1)?.WATCH.tv?.MODE).toBe("events");

    // The mapping fixed and SIGHUP again: the mapping applies; WATCH is named once, as waiting, not warned again.
    await write({ WATCH: { tv: { PATHS: ["/mnt/tv"], MODE: "poll" } }, SERVER_PATH_MAPPINGS: { "/data/tv": ["/tv"] } });
    await reloader.reload();
    expect(warnings()).toHaveLength(1);
    expect(capture.messages().filter((msg) => msg.includes("WATCH"))).toEqual([
      expect.stringMatching(/^Config changed WATCH/),
      "Config reloaded: now in force: SERVER_PATH_MAPPINGS. Still waiting for a restart: WATCH.",
    ]);

    await reloader.reload();
    expect(capture.messages().at(-1)).toBe("Config reloaded: nothing changed. Still waiting for a restart: WATCH.");
    expect(warnings()).toHaveLength(1);

    // Changed again: a new change, warned about once.
    await write({ WATCH: { tv: { PATHS: ["/mnt/tv", "/mnt/tv2"], MODE: "poll" } }, SERVER_PATH_MAPPINGS: { "/data/tv": ["/tv"] } });
    await reloader.reload();
    expect(warnings()).toHaveLength(2);
    expect(warnings()[1]).toMatch(/^Config changed WATCH,/);
  });
});
