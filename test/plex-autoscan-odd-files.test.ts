import { execFileSync } from "node:child_process";
import { mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ScanQueue } from "../src/queue/scan-queue.ts";
import { createScanQueue } from "../src/queue/open-scan-queue.ts";
import { captureLog, makeTempDir } from "./support/capture-log.ts";
import { createManualClock } from "./support/manual-clock.ts";
import { backlogPaths, damagePlexAutoscanQueue, writePlexAutoscanQueue } from "./support/plex-autoscan-queue.ts";
import { runCli, startCli, within } from "./support/run-cli.ts";

/**
 * plex_autoscan's `queue.db` as users bring it over: damaged (64 KB of garbage two-thirds in, or cut to half), with a
 * `queueitemmodel` table of other columns, or not a file at all. It is recognised by its table, never taken for
 * autoscan's own queue; the rows SQLite can still read are imported and the loss is said; a FIFO is refused at once.
 * Both ways in: `autoscan import`, and the first start with the file where autoscan's queue goes.
 */
const ROWS = 20_000;

let temp: Awaited<ReturnType<typeof makeTempDir>>;
beforeEach(async () => {
  temp = await makeTempDir();
});
afterEach(() => temp.cleanup());

const config = (): string => join(temp.dir, "config", "config.json");
async function initConfig(): Promise<void> {
  expect((await runCli(["config", "init", "--config", config()])).code).toBe(0);
}
const importArgs = (file: string): string[] => ["import", "--from-plex-autoscan", file, "--config", config(), "--data-dir", join(temp.dir, "data")];

/** The queue as the service opens it, with the import that runs beside it waited for. */
async function openAndImport(file: string, logs = captureLog()): Promise<ScanQueue> {
  const queue = await createScanQueue({ file, clock: createManualClock(), log: logs.log, scanDelayMs: 180_000 });
  for (let i = 0; i < 3_000 && queue.importing?.() !== undefined; i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(queue.importing?.()).toBeUndefined();
  return queue;
}

/** What the summary says of a file cut short: the rows read, any ids lost before the cut, the rows after the cut. */
const tailLost = (read: number): RegExp =>
  new RegExp(`The file is damaged: ${read.toLocaleString("en-US")} row\\(s\\) read(, up to [\\d,]+ could not be read \\(ids [^)]+\\))?; the rows after id [\\d,]+ could not be read`);

function damaged(how: "garbage" | "truncate", name = "queue.db"): string {
  const file = join(temp.dir, name);
  writePlexAutoscanQueue(file, backlogPaths(ROWS));
  damagePlexAutoscanQueue(file, how);
  return file;
}

describe("a damaged plex_autoscan queue.db of 20,000 rows", () => {
  it("64 KB of garbage two-thirds in: `autoscan import` imports every readable row and says how many were lost", async () => {
    await initConfig();
    const file = damaged("garbage", "plex_autoscan.db");
    const result = await runCli(importArgs(file), { timeoutMs: 60_000 });
    expect(result.code, result.stderr).toBe(0);
    const imported = Number(/^Imported (\d+) scan request\(s\)/.exec(result.stdout)?.[1]);
    // A plain walk of the table stops at the first damaged page (~13,400 rows); row by row past it, far more.
    expect(imported).toBeGreaterThan(19_000);
    const lost = ROWS - imported;
    expect(result.stdout).toContain(`The file is damaged: ${imported.toLocaleString("en-US")} row(s) read, up to ${lost.toLocaleString("en-US")} could not be read (ids `);
    const queue = await openAndImport(join(temp.dir, "data", "queue.db"));
    expect(await queue.pendingCount()).toBe(imported);
    await queue.close();
  }, 60_000);

  it("cut to half, placed as queue.db: the first start imports the readable rows, says what was lost, never adopts it", async () => {
    const file = damaged("truncate");
    const logs = captureLog();
    const queue = await openAndImport(file, logs);
    const pending = await queue.pendingCount();
    expect(pending).toBeGreaterThan(9_000);
    const last = logs.messages().find((m) => m.startsWith("Imported"));
    expect(last).toContain(`Imported ${String(pending)} scan request(s) from the plex_autoscan queue`);
    expect(last).toMatch(tailLost(pending));
    // Never taken for autoscan's own damaged queue (moved aside, "salvaged 0").
    expect(logs.messages().filter((m) => /salvaged|moved it aside/.test(m))).toEqual([]);
    await queue.close();
    const names = readdirSync(temp.dir);
    expect(names).toContain("queue.db.plex_autoscan.bak");
    expect(names.some((name) => name.includes("corrupt"))).toBe(false);
  }, 60_000);

  it("64 KB of garbage, placed as queue.db: imported at the first start, the loss said", async () => {
    const file = damaged("garbage");
    const logs = captureLog();
    const queue = await openAndImport(file, logs);
    const pending = await queue.pendingCount();
    expect(pending).toBeGreaterThan(19_000);
    expect(logs.messages().find((m) => m.startsWith("Imported"))).toContain(`up to ${(ROWS - pending).toLocaleString("en-US")} could not be read`);
    await queue.close();
  }, 60_000);

  it("`autoscan import` of the file cut to half: the readable rows, and which ones were lost", async () => {
    await initConfig();
    const file = damaged("truncate", "plex_autoscan.db");
    const result = await runCli(importArgs(file), { timeoutMs: 60_000 });
    expect(result.code, result.stderr).toBe(0);
    const imported = Number(/^Imported (\d+) scan request\(s\)/.exec(result.stdout)?.[1]);
    expect(imported).toBeGreaterThan(9_000);
    expect(result.stdout).toMatch(tailLost(imported));
  }, 60_000);
});

describe("a queueitemmodel table of other columns", () => {
  const writeOdd = (file: string): void => {
    const db = new DatabaseSync(file);
    db.exec(`CREATE TABLE queueitemmodel (id INTEGER PRIMARY KEY, scan_path VARCHAR(255) NOT NULL, scan_for VARCHAR(255));
      INSERT INTO queueitemmodel (scan_path, scan_for) VALUES ('/tv/A/Season 01/A - S01E01.mkv', 'Sonarr'), ('/movies/B (2001)', 'Radarr');`);
    db.close();
  };

  it("without scan_type, placed as queue.db: imported, not adopted as autoscan's own", async () => {
    const file = join(temp.dir, "queue.db");
    writeOdd(file);
    const logs = captureLog();
    const queue = await openAndImport(file, logs);
    expect((await queue.listPending()).map((item) => item.folder).sort()).toEqual(["/movies/B (2001)", "/tv/A/Season 01/A - S01E01.mkv"]);
    expect((await queue.listPending()).flatMap((item) => item.requests.map((r) => [r.source, r.event])).sort()).toEqual([
      ["Radarr", "Restored"],
      ["Sonarr", "Restored"],
    ]);
    await queue.close();
    expect(readdirSync(temp.dir)).toContain("queue.db.plex_autoscan.bak");
  });

  it("without scan_type, given to `autoscan import`: imported", async () => {
    await initConfig();
    const file = join(temp.dir, "odd.db");
    writeOdd(file);
    const result = await runCli(importArgs(file));
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^Imported 2 scan request\(s\)/);
  });
});

describe("not a file", () => {
  const fifo = (path: string): string => {
    execFileSync("mkfifo", [path]);
    return path;
  };

  it("a FIFO given to `autoscan import` is refused at once, with what it is", async () => {
    await initConfig();
    const path = fifo(join(temp.dir, "queue.db"));
    const running = startCli(importArgs(path), { timeoutMs: 30_000 });
    // Refused at once; were it waiting on the FIFO, SIGTERM must still end it.
    const ended = await within(running.exited, 15_000, "autoscan import of a FIFO").catch(async (error: unknown) => {
      running.process.kill("SIGTERM");
      await running.exited;
      throw error;
    });
    expect(ended.code).toBe(2);
    expect(running.stderr()).toContain(`'${path}' is a FIFO (named pipe), not a file`);
  }, 40_000);

  it("a directory given to `autoscan import` is refused the same way", async () => {
    await initConfig();
    const path = join(temp.dir, "a-folder");
    mkdirSync(path);
    const result = await runCli(importArgs(path));
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`'${path}' is a directory, not a file`);
  });

  it("a FIFO where the queue file goes: the service refuses to start, at once, saying so", async () => {
    await initConfig();
    const data = join(temp.dir, "data");
    mkdirSync(data);
    const path = fifo(join(data, "queue.db"));
    const running = startCli(["server", "--config", config(), "--data-dir", data, "--logfile", "none"], { timeoutMs: 30_000 });
    const ended = await within(running.exited, 15_000, "autoscan server with a FIFO as queue.db").catch(async (error: unknown) => {
      running.process.kill("SIGTERM");
      await running.exited;
      throw error;
    });
    expect(ended.code).toBe(1);
    expect(running.stdout() + running.stderr()).toContain(`'${path}' is a FIFO (named pipe), not a file`);
  }, 40_000);
});
