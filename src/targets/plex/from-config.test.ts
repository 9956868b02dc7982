// @module-tag process
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parseConfigText } from "../../config/load.ts";
import type { Logger } from "../../core/logger.ts";
import { createLogger } from "../../logging/create-logger.ts";
import { startFakePlex, type FakePlex } from "../../../test/support/fake-plex.ts";
import { createSteppingClock } from "../../../test/support/plex-clock.ts";
import { createPlexFromConfig, type PrimaryPlex } from "./from-config.ts";

let plex: FakePlex;
let wiring: PrimaryPlex | undefined;

beforeEach(async () => {
  plex = await startFakePlex({ sections: [{ key: "1", title: "Movies", type: "movie", locations: ["/data/Movies"] }] });
});
afterEach(async () => {
  wiring?.close();
  wiring = undefined;
  await plex.close();
});

async function wire(keys: Record<string, unknown>, log: Logger = pino({ level: "silent" })): Promise<PrimaryPlex> {
  const text = JSON.stringify({ SERVER_PASS: "0123456789abcdef", PLEX_LOCAL_URL: plex.url, ...keys });
  const { config } = parseConfigText(text, "/config/config.json", {});
  wiring = await createPlexFromConfig({ config, dockerHost: undefined, clock: createSteppingClock(), log });
  return wiring;
}

const context = {
  sources: [{ source: "Radarr", event: "Download", path: "/data/Movies/Heat (1995)/Heat.mkv" }],
  files: ["/data/Movies/Heat (1995)/Heat.mkv"],
  priority: 0,
  attempt: 1,
  signal: new AbortController().signal,
};

describe("Config → Plex", () => {
  it("builds the API target by default and scans through PLEX_LOCAL_URL with PLEX_TOKEN", async () => {
    const { target } = await wire({ PLEX_TOKEN: plex.token, PLEX_ANALYZE_TYPE: "off", PLEX_DATABASE_PATH: "" });
    expect(target.name).toBe("plex");
    expect(await target.scan("/data/Movies/Heat (1995)", context)).toEqual({ status: "scanned", detail: "section 1" });
    expect(plex.scans.map((s) => s.path)).toEqual(["/data/Movies/Heat (1995)"]);
  });

  it("builds the scanner target for PLEX_SCAN_METHOD scanner", async () => {
    const { target } = await wire({ PLEX_TOKEN: plex.token, PLEX_SCAN_METHOD: "scanner", USE_DOCKER: false, USE_SUDO: false });
    expect(target.name).toBe("plex-scanner");
  });

  it("answers 'not in Plex' when PLEX_DATABASE_PATH is empty", async () => {
    const { isInLibrary } = await wire({ PLEX_TOKEN: plex.token, PLEX_DATABASE_PATH: "" });
    expect(await isInLibrary("/data/Movies/Heat (1995)/Heat.mkv")).toBe(false);
  });

  it("says once at start, as information, that analysis is off without Plex's database (the default Docker setup), then scans quietly", async () => {
    const lines: string[] = [];
    const { log } = createLogger({ level: "debug", format: "json", stream: { write: (line: string) => lines.push(line) } });
    const missing = "/nonexistent-autoscan-test/Plug-in Support/Databases/com.plexapp.plugins.library.db";
    const { target, plex: built } = await wire({ PLEX_TOKEN: plex.token, PLEX_DATABASE_PATH: missing }, log);
    expect(await built.database.usable()).toBe(false);
    for (let i = 0; i < 5; i++) await target.scan("/data/Movies/Heat (1995)", context);
    const loud = lines.map((line) => JSON.parse(line) as { level: string; msg: string }).filter((l) => l.level !== "debug" && l.level !== "info");
    expect(loud.map((l) => l.msg)).toEqual([]);
    const said = lines.map((line) => JSON.parse(line) as { level: string; msg: string }).filter((l) => l.msg.startsWith("Analysis after a scan is off"));
    expect(said.map((l) => l.level)).toEqual(["info"]);
    expect(plex.scans).toHaveLength(5);
  });
});
