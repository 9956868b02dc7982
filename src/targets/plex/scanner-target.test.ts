// @module-tag process
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { installHostFakeScanner, readHostCalls } from "../../../test/support/docker/host-fake-scanner.ts";
import { startFakePlex } from "../../../test/support/fake-plex.ts";
import { createSteppingClock } from "../../../test/support/plex-clock.ts";
import { createLibraryFixture } from "../../../test/support/plex-library-db.ts";
import { systemClock } from "../../core/clock.ts";
import { TargetUnavailableError } from "../../core/errors.ts";
import type { ScanContext } from "../../core/target.ts";
import { createHostRunner } from "./host-runner.ts";
import { createPlexScanner } from "../../docker/plex-scanner.ts";
import { NATIVE_LAYOUT } from "../../docker/presets.ts";
import { createLogger } from "../../logging/create-logger.ts";
import { createPlex } from "./create-plex.ts";
import { ScannerFailedError, createScannerTarget, type ScannerTargetOptions } from "./scanner-target.ts";

/** The scanner target with `Plex Media Scanner` on this host (the fake), so it is tested without Docker too. */
describe("Plex scanner target (host runner, fake scanner)", () => {
  let dir: string;
  let fake: { scanner: string; state: string };
  const background: ChildProcess[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "autoscan-scanner-target-"));
    fake = await installHostFakeScanner(join(dir, "Plex Media Server"));
  });
  afterEach(async () => {
    for (const child of background.splice(0)) child.kill("SIGKILL");
    await rm(join(fake.state, "control.json"), { force: true });
  });
  afterAll(async () => rm(dir, { recursive: true, force: true }));

  function make(overrides: Partial<ScannerTargetOptions> = {}) {
    const lines: { level: number; msg: string; component?: string }[] = [];
    const { log } = createLogger({ level: "debug", format: "json", stream: { write: (l: string) => lines.push(JSON.parse(l)) } });
    const scanner = createPlexScanner({
      runner: createHostRunner({ useSudo: false }),
      layout: async () => ({ layout: { ...NATIVE_LAYOUT, scanner: fake.scanner, user: "" }, preset: "none", reason: "test" }),
    });
    const target = createScannerTarget({
      scanner,
      sections: { resolve: async (folder) => (folder.startsWith("/data/TV/") ? [{ id: "2" }] : []) },
      timeoutMs: 30_000,
      waitForExternalScanners: false,
      clock: systemClock,
      log,
      ...overrides,
    });
    return { target, lines, messages: () => lines.map((line) => line.msg) };
  }

  const context = (signal = new AbortController().signal): ScanContext => ({
    sources: [],
    files: [],
    priority: 0,
    attempt: 1,
    signal,
  });

  it("scans with --scan --refresh --section --directory and logs the classic lines under PLEX", async () => {
    const { target, lines, messages } = make();
    expect(await target.scan("/data/TV/Show (2020)/Season 01", context())).toEqual({ status: "scanned", detail: "section 2" });
    expect((await readHostCalls(fake.state)).at(-1)?.argv).toEqual([
      "--scan", "--refresh", "--section", "2", "--directory", "/data/TV/Show (2020)/Season 01",
    ]);
    expect(messages()).toEqual(
      expect.arrayContaining([
        "Using Section ID '2' for '/data/TV/Show (2020)/Season 01'",
        "Running Plex Media Scanner for: /data/TV/Show (2020)/Season 01",
        "Scanning /data/TV/Show (2020)/Season 01",
        "Plex Media Scanner finished.",
      ]),
    );
    expect(lines.every((line) => line.component === "PLEX")).toBe(true);
    expect(lines.find((line) => line.msg.includes("deprecated"))?.level).toBe("debug");
  });

  it("skips a folder in no section", async () => {
    const { target, messages } = make();
    expect(await target.scan("/data/Other/x", context())).toMatchObject({ status: "skipped" });
    expect(messages()).toContain("Unable to map '/data/Other/x' to a Section ID.");
  });

  it("turns a non-zero exit into an error the queue retries, troubled lines at warn", async () => {
    await writeFile(join(fake.state, "control.json"), JSON.stringify({ exit: 1, stderr: "Error: database is locked" }));
    const { target, lines } = make();
    const error = await target.scan("/data/TV/x", context()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ScannerFailedError);
    expect((error as Error).message).toBe("Plex Media Scanner exited with code 1 for '/data/TV/x' (section 2): Error: database is locked");
    expect(lines.find((line) => line.msg === "Error: database is locked")?.level).toBe("warn");
  });

  it("keeps the work queued (TargetUnavailable) when shutdown interrupts a scan", async () => {
    await writeFile(join(fake.state, "control.json"), JSON.stringify({ sleepMs: 20_000 }));
    const { target } = make();
    const controller = new AbortController();
    const pending = target.scan("/data/TV/y", context(controller.signal));
    setTimeout(() => controller.abort(), 300);
    await expect(pending).rejects.toBeInstanceOf(TargetUnavailableError);
  });

  it("analyzes after the scan once Plex reports the scanned section idle, as the API target does", async () => {
    const fixture = createLibraryFixture(join(dir, "com.plexapp.plugins.library.db"));
    const movies = fixture.addSection({ name: "Movies", type: "movie", roots: ["/data/Movies"] });
    const tv = fixture.addSection({ name: "TV", type: "show", roots: ["/data/TV"] });
    const file = "/data/TV/Dark/Season 01/Dark - S01E01.mkv";
    const episode = fixture.addEpisode({ sectionId: tv, show: "Dark", season: 1, episode: 1, file, size: 1 });
    fixture.seal();
    const server = await startFakePlex({
      sections: [
        { key: movies, title: "Movies", type: "movie", locations: ["/data/Movies"] },
        { key: tv, title: "TV", type: "show", locations: ["/data/TV"] },
      ],
    });
    const clock = createSteppingClock();
    const { log } = createLogger({ level: "silent", format: "json" });
    const plex = createPlex({
      url: server.url,
      token: server.token,
      clock,
      log,
      checkBeforeScan: false,
      waitForExternalScanners: false,
      analyze: { type: "basic", directory: false },
      emptyTrash: { enabled: false, maxFiles: 100, controlFiles: [], zeroDeleted: false },
      databasePath: fixture.path,
    });
    try {
      server.setBusy(tv, 6); // Plex refreshes the section after the scanner's run
      server.setBusy(movies, 1_000); // another section, busy all along: not waited for
      const { target } = make({ sections: plex.sections, afterScan: plex.afterScan });
      const outcome = await target.scan("/data/TV/Dark/Season 01", { ...context(), files: [file] });
      expect(outcome).toEqual({ status: "scanned", detail: `section ${tv}; analyzed 1 item(s)` });
      expect(server.analyzed).toEqual([episode.itemId]);
      expect(clock.sleeps.filter((ms) => ms === 10_000).length).toBeGreaterThanOrEqual(2);
      expect(clock.sleeps.reduce((sum, ms) => sum + ms, 0)).toBeLessThan(5 * 60_000);
    } finally {
      plex.close();
      fixture.close();
      await server.close();
    }
  });

  it("waits for another Plex Media Scanner on this host before scanning", async () => {
    const other = spawn(fake.scanner, ["--scan", "--section", "9"], {
      env: { FAKE_SCANNER_SLEEP_MS: "1000", PATH: "/usr/bin:/bin" },
      stdio: "ignore",
    });
    background.push(other);
    const { target, messages } = make({ waitForExternalScanners: true, externalScannerPollMs: 100, externalScannerMaxWaitMs: 10_000 });
    await new Promise((resolve) => setTimeout(resolve, 200));
    await target.scan("/data/TV/z", context());
    const said = messages();
    // Other processes on a shared machine may be listed too; ours must be among them.
    const waited = said.findIndex((m) => new RegExp(`^'Plex Media Scanner' is running, pid: .*\\b${other.pid}\\b`).test(m));
    expect(waited).toBeGreaterThanOrEqual(0);
    expect(said.indexOf("No 'Plex Media Scanner' processes were found.")).toBeGreaterThan(waited);
  });
});
