import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { TargetAuthError, TargetUnavailableError } from "../src/core/errors.ts";
import type { ScanContext } from "../src/core/target.ts";
import { createLogger } from "../src/logging/create-logger.ts";
import { createPlex, type Plex, type PlexOptions } from "../src/targets/plex/create-plex.ts";
import { startFakePlex, type FakePlex, type FakeSection } from "./support/fake-plex.ts";
import { createSteppingClock, type SteppingClock } from "./support/plex-clock.ts";

const SECTIONS: FakeSection[] = [
  { key: "1", title: "Movies", type: "movie", locations: ["/data/Movies"] },
  { key: "2", title: "Movies 4K", type: "movie", locations: ["/data/Movies4K"] },
  { key: "3", title: "TV", type: "show", locations: ["/data/TV", "/data2/TV"] },
  { key: "4", title: "Kids TV", type: "show", locations: ["/data/TV/Kids"] },
];

let plex: FakePlex;
let clock: SteppingClock;
let lines: Record<string, unknown>[];
let built: Plex | undefined;

beforeEach(async () => {
  plex = await startFakePlex({ sections: SECTIONS });
  clock = createSteppingClock();
  lines = [];
});
afterEach(async () => {
  built?.close();
  built = undefined;
  await plex.close();
});

function target(overrides: Partial<PlexOptions> = {}) {
  const handle = createLogger({
    level: "debug",
    format: "json",
    stream: { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) },
    secrets: [plex.token],
  });
  built = createPlex({
    url: plex.url,
    token: plex.token,
    clock,
    log: handle.log,
    checkBeforeScan: false,
    waitForExternalScanners: false,
    analyze: { type: "off", directory: true },
    emptyTrash: { enabled: false, maxFiles: 100, controlFiles: [], zeroDeleted: false },
    databasePath: "",
    ...overrides,
  });
  return built.apiTarget;
}

function context(files: string[] = [], event = "Download"): ScanContext {
  return {
    sources: [{ source: "Sonarr", event, path: files[0] ?? "/x" }],
    files,
    priority: 0,
    attempt: 1,
    signal: new AbortController().signal,
  };
}

const messages = (): string[] => lines.map((line) => String(line.msg));

describe("Plex API target: which sections get the scan", () => {
  it("scans only Movies 4K for a folder under /data/Movies4K", async () => {
    const outcome = await target().scan("/data/Movies4K/Heat (1995)", context());
    expect(outcome).toEqual({ status: "scanned", detail: "section 2" });
    expect(plex.scans.map((s) => [s.sectionId, s.path])).toEqual([["2", "/data/Movies4K/Heat (1995)"]]);
    expect(messages()).toContain("Using Section ID '2' for '/data/Movies4K/Heat (1995)'");
  });

  it("scans every section holding the folder, most specific first", async () => {
    const outcome = await target().scan("/data/TV/Kids/Bluey/Season 01", context());
    expect(plex.scans.map((s) => s.sectionId)).toEqual(["4", "3"]);
    expect(plex.scans.every((s) => s.inside)).toBe(true);
    expect(outcome).toEqual({ status: "scanned", detail: "sections 4, 3" });
  });

  it("skips a folder in no section with plex_autoscan's log line", async () => {
    const outcome = await target().scan("/data/Music/Album", context());
    expect(outcome.status).toBe("skipped");
    expect(plex.scans).toEqual([]);
    expect(messages()).toContain("Unable to map '/data/Music/Album' to a Section ID.");
  });

  it("finds a section added after start-up by fetching the list again on a miss", async () => {
    const scanTarget = target();
    await scanTarget.scan("/data/Movies/A", context());
    plex.setSections([...SECTIONS, { key: "9", title: "Music", type: "artist", locations: ["/data/Music"] }]);
    clock.advance(60_000);
    const outcome = await scanTarget.scan("/data/Music/Album", context());
    expect(outcome).toEqual({ status: "scanned", detail: "section 9" });
  });

  it("sends spaces, parentheses and unicode form-encoded, and never the token in the URL", async () => {
    await target().scan("/data/Movies/Léon (1994) [Director's Cut]", context());
    const request = plex.requests.find((r) => r.path.endsWith("/refresh"));
    expect(request?.method).toBe("GET");
    expect(request?.rawQuery).toBe("path=%2Fdata%2FMovies%2FL%C3%A9on+%281994%29+%5BDirector%27s+Cut%5D");
    expect(plex.requests.every((r) => !r.rawQuery.includes(plex.token))).toBe(true);
  });
});

describe("Plex API target: when Plex is not fine", () => {
  it("throws TargetAuthError for a rejected token and reports unavailable, loudly, once", async () => {
    const scanTarget = target({ token: "rejected-token-123456" });
    await expect(scanTarget.scan("/data/Movies/A", context())).rejects.toBeInstanceOf(TargetAuthError);
    expect(await scanTarget.isAvailable()).toBe(false);
    expect(await scanTarget.isAvailable()).toBe(false);
    expect(messages().filter((m) => m.includes("Plex rejected the token"))).toHaveLength(1);
    expect(JSON.stringify(lines)).not.toContain("rejected-token-123456");
  });

  it("throws TargetUnavailableError while Plex is down and scans once it is back", async () => {
    const scanTarget = target();
    plex.setDown("reset");
    await expect(scanTarget.scan("/data/Movies/A", context())).rejects.toBeInstanceOf(TargetUnavailableError);
    expect(await scanTarget.isAvailable()).toBe(false);
    plex.setDown(false);
    expect(await scanTarget.isAvailable()).toBe(true);
    expect((await scanTarget.scan("/data/Movies/A", context())).status).toBe("scanned");
    expect(messages()).toContain("Plex is available again");
  });

  it("treats a Plex that answers too slowly as unavailable", async () => {
    const scanTarget = target({ timeoutMs: 100 });
    plex.setDelay(2_000);
    await expect(scanTarget.scan("/data/Movies/A", context())).rejects.toBeInstanceOf(TargetUnavailableError);
  });

  it("PLEX_CHECK_BEFORE_SCAN waits until Plex answers, then scans", async () => {
    plex.failNext(/^GET \/$/, 503, 2);
    await target({ checkBeforeScan: true }).scan("/data/Movies/A", context());
    expect(clock.sleeps).toEqual([15_000, 15_000]);
    expect(plex.scans).toHaveLength(1);
    expect(messages().some((m) => m.startsWith("Plex is available for media scanning"))).toBe(true);
  });

  it("PLEX_CHECK_BEFORE_SCAN gives up after its bound, so the queue retries later", async () => {
    plex.failNext(/^GET \/$/, 503, 1_000);
    const scanTarget = target({ checkBeforeScan: true, timing: { availableMaxMs: 60_000 } });
    await expect(scanTarget.scan("/data/Movies/A", context())).rejects.toThrow(/did not become available within 60 s/);
    expect(plex.scans).toEqual([]);
  });

  it("PLEX_WAIT_FOR_EXTERNAL_SCANNERS waits while the section is busy, then scans", async () => {
    plex.setBusy("1", 6);
    await target({ waitForExternalScanners: true }).scan("/data/Movies/A", context());
    expect(clock.sleeps.length).toBeGreaterThanOrEqual(2);
    expect(plex.scans).toHaveLength(1);
    expect(messages().some((m) => m.startsWith("Waiting before scanning: Plex is scanning section(s) 1"))).toBe(true);
  });

  it("PLEX_WAIT_FOR_EXTERNAL_SCANNERS is bounded: a section busy for ever still gets its scan", async () => {
    plex.setBusy("1", 1_000_000);
    const scanTarget = target({ waitForExternalScanners: true, timing: { busyPollMs: 10_000, busyMaxMs: 30_000 } });
    await scanTarget.scan("/data/Movies/A", context());
    expect(clock.sleeps).toEqual([10_000, 10_000, 10_000]);
    expect(plex.scans).toHaveLength(1);
    expect(messages().some((m) => m.includes("still scanning section(s) 1 after 30 s"))).toBe(true);
  });

  it("counts an activity without context yet as busy", async () => {
    plex.setActivityContext(false);
    plex.setBusy("3", 4); // the section list read by the resolver counts as one status read
    await target({ waitForExternalScanners: true }).scan("/data/Movies/A", context());
    expect(clock.sleeps.length).toBeGreaterThanOrEqual(1);
    expect(plex.scans).toHaveLength(1);
  });
});
