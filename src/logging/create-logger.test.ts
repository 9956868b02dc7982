import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { LogFormat, LogLevel } from "../core/logger.ts";
import { makeTempDir } from "../../test/support/capture-log.ts";
import { createLogger, type LoggerOptions } from "./create-logger.ts";

/** `<timestamp> - <LEVEL> - <COMPONENT> [<id>]: <message>` */
const CLASSIC = /^(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2},\d{3}) - (TRACE|DEBUG|INFO|WARNING|ERROR|CRITICAL) - ([A-Z0-9_]+) \[([^\]]+)\]: (.*)$/;

function capture(level: LogLevel, format: LogFormat, extra: Partial<LoggerOptions> = {}) {
  const chunks: string[] = [];
  const handle = createLogger({ level, format, stream: { write: (line: string) => chunks.push(line) }, ...extra });
  const lines = (): string[] => chunks.join("").split("\n").filter((line) => line !== "");
  return { ...handle, lines };
}

describe("createLogger, classic format (the default users' tooling greps)", () => {
  it("prints one classic line per event, with the component in capitals and the request id", async () => {
    const { log, lines } = capture("info", "classic");
    log.child({ component: "plex" }).info({ id: 12345 }, "Scan requested for '/data/Movies/X (2020)'");
    expect(lines()).toHaveLength(1);
    const match = CLASSIC.exec(lines()[0] ?? "");
    expect(match?.slice(2)).toEqual(["INFO", "PLEX", "12345", "Scan requested for '/data/Movies/X (2020)'"]);
  });

  it("stamps the current time", async () => {
    const { log, lines } = capture("info", "classic");
    const before = Date.now();
    log.info("now");
    const stamp = CLASSIC.exec(lines()[0] ?? "")?.[1] ?? "";
    const [date, time] = stamp.split(" ");
    const parsed = new Date(`${date}T${(time ?? "").replace(",", ".")}`).getTime();
    expect(Math.abs(parsed - before)).toBeLessThan(60_000);
  });

  it("uses the process id when there is no request id; extra fields only at debug level", async () => {
    const info = capture("info", "classic");
    info.log.child({ component: "QUEUE" }).info({ folder: "/data/TV/Show", section: 2 }, "Added to the queue");
    expect(info.lines()[0]).toMatch(new RegExp(` - INFO - QUEUE \\[${process.pid}\\]: Added to the queue$`));
    const debug = capture("debug", "classic");
    debug.log.child({ component: "QUEUE" }).info({ folder: "/data/TV/Show", section: 2 }, "Added to the queue");
    expect(debug.lines()[0]).toMatch(
      new RegExp(` - INFO - QUEUE \\[${process.pid}\\]: Added to the queue folder=/data/TV/Show section=2$`),
    );
  });

  it("prints an error's message after the line", async () => {
    const { log, lines } = capture("info", "classic");
    log.error({ err: new TypeError("boom") }, "Scan failed");
    expect(lines()[0]).toMatch(/ - ERROR - AUTOSCAN \[\d+\]: Scan failed - TypeError: boom$/);
  });

  it("states an error's message once when the line already says it", async () => {
    const { log, lines } = capture("info", "classic");
    const error = new TypeError("No Google Drive token yet: run `autoscan authorize`, then restart autoscan.");
    log.error({ err: error }, `Google Drive monitoring stopped: ${error.message}`);
    expect(lines()[0]).toMatch(/: Google Drive monitoring stopped: No Google Drive token yet: run `autoscan authorize`, then restart autoscan\.$/);
  });
});

describe("createLogger, JSON lines (--log-format json)", () => {
  it("prints one JSON object per line with level, time, message and fields", async () => {
    const { log, lines } = capture("info", "json");
    log.child({ component: "PLEX" }).warn({ id: "r-1", folder: "/data/Movies" }, "Plex is busy");
    log.info("second");
    const records = lines().map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(records).toHaveLength(2);
    expect(records[0]).toMatchObject({ level: "warn", component: "PLEX", id: "r-1", folder: "/data/Movies", msg: "Plex is busy" });
    // ISO 8601 in UTC, what Loki and Elastic parse without a custom pattern.
    expect(String(records[0]?.time)).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(Math.abs(Date.parse(String(records[0]?.time)) - Date.now())).toBeLessThan(60_000);
    expect(records[1]).toMatchObject({ level: "info", msg: "second" });
  });

  it("keeps errors as objects with type, message and stack", async () => {
    const { log, lines } = capture("info", "json");
    log.error({ err: new RangeError("out") }, "failed");
    const record = JSON.parse(lines()[0] ?? "{}") as { err?: Record<string, unknown> };
    expect(record.err).toMatchObject({ type: "RangeError", message: "out" });
    expect(String(record.err?.stack)).toContain("RangeError: out");
  });
});

describe("level filtering (--loglevel)", () => {
  const levels: LogLevel[] = ["debug", "info", "warn", "error"];

  it.each(levels)("at %s, only that level and above are written", (level) => {
    const { log, lines } = capture(level, "json");
    log.trace("t");
    log.debug("d");
    log.info("i");
    log.warn("w");
    log.error("e");
    const expected = ["d", "i", "w", "e"].slice(levels.indexOf(level));
    expect(lines().map((line) => (JSON.parse(line) as { msg: string }).msg)).toEqual(expected);
  });

  it("silent writes nothing", async () => {
    const { log, lines } = capture("silent", "classic");
    log.error("e");
    expect(lines()).toEqual([]);
  });

  it("a new level reaches the root and every child made before it (config reload)", async () => {
    const handle = capture("info", "json");
    const child = handle.log.child({ component: "DRIVE" });
    const grandchild = child.child({ id: 7 });
    grandchild.debug("hidden");
    handle.setLevel("debug");
    grandchild.debug("shown");
    child.debug("shown too");
    handle.setLevel("warn");
    child.info("hidden again");
    handle.log.warn("last");
    expect(handle.lines().map((line) => (JSON.parse(line) as { msg: string }).msg)).toEqual(["shown", "shown too", "last"]);
  });

  it("child loggers follow the root level", async () => {
    const { log, lines } = capture("warn", "classic");
    const child = log.child({ component: "DRIVE" });
    child.info("hidden");
    child.warn("shown");
    expect(lines()).toHaveLength(1);
    expect(lines()[0]).toMatch(/ - WARNING - DRIVE \[\d+\]: shown$/);
  });
});

describe("the log file", () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => ({ dir, cleanup } = await makeTempDir("autoscan-logfile-")));
  afterEach(() => cleanup());

  it("gets the classic lines even when the console prints JSON", async () => {
    const path = join(dir, "logs", "autoscan.log");
    const { log, lines, settle, close } = capture("info", "json", { file: { path, maxBytes: 1_000_000, maxFiles: 2 } });
    log.child({ component: "PLEX" }).info({ id: 9 }, "Finished scan!");
    await settle();
    close();
    expect(JSON.parse(lines()[0] ?? "{}")).toMatchObject({ msg: "Finished scan!" });
    const fileLines = readFileSync(path, "utf8").trimEnd().split("\n");
    expect(fileLines).toHaveLength(1);
    expect(CLASSIC.exec(fileLines[0] ?? "")?.slice(2)).toEqual(["INFO", "PLEX", "9", "Finished scan!"]);
  });

  it("rotates by size through the logger, keeping the number of files asked for", async () => {
    const path = join(dir, "autoscan.log");
    const { log, settle, close } = capture("info", "classic", { file: { path, maxBytes: 400, maxFiles: 2 } });
    for (let i = 0; i < 60; i++) log.info(`Scan request ${i} is now being processed...`);
    await settle();
    close();
    const files = [path, `${path}.1`, `${path}.2`].map((file) => readFileSync(file, "utf8"));
    for (const text of files) expect(Buffer.byteLength(text)).toBeLessThanOrEqual(400);
    expect(() => readFileSync(`${path}.3`)).toThrow();
    expect(files[0]).toMatch(/Scan request 59 is now being processed...\n$/);
    expect(files[2]).not.toContain("Scan request 0 ");
  });
});

describe("a log that cannot be written never fails the log call", () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => ({ dir, cleanup } = await makeTempDir("autoscan-logfault-")));
  afterEach(() => cleanup());

  it("a log file whose folder cannot exist: every line still on the console, one warning, then one line when it works", async () => {
    // A file where the folder should be: EEXIST for any user (the real faults, full disk and read-only, are in
    // rotating-file-faults.test.ts and test/logging-faults.test.ts).
    writeFileSync(join(dir, "logs"), "not a folder");
    const path = join(dir, "logs", "autoscan.log");
    const { log, lines, settle, close } = capture("info", "classic", { file: { path, maxBytes: 1_000_000, maxFiles: 2 } });
    expect(() => {
      for (let n = 1; n <= 5; n++) log.info(`line ${n}`);
    }).not.toThrow();
    await settle();
    const warnings = lines().filter((line) => line.includes(`Log file ${path} cannot be written`));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/ - WARNING - AUTOSCAN \[\d+\]: Log file .* cannot be written: a file stands where its folder should be \(EEXIST\); 1 line dropped/);
    expect(lines().filter((line) => / line \d$/.test(line))).toHaveLength(5);

    rmSync(join(dir, "logs"));
    log.info("line 6");
    await settle();
    await settle();
    close();
    expect(lines().filter((line) => line.includes(`Log file ${path} is written again; 5 lines were dropped`))).toHaveLength(1);
    // The file tells its reader about the gap too.
    const file = readFileSync(path, "utf8");
    expect(file).toMatch(/: line 6\n.*Log file .* is written again; 5 lines were dropped while it could not be\n$/);
  });

  it("the warning is a JSON line when the console prints JSON", async () => {
    writeFileSync(join(dir, "logs"), "not a folder");
    const path = join(dir, "logs", "autoscan.log");
    const { log, lines, settle } = capture("info", "json", { file: { path, maxBytes: 1_000_000, maxFiles: 2 } });
    log.info("x");
    await settle();
    const records = lines().map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(records[1]).toMatchObject({ level: "warn", component: "AUTOSCAN", logFile: path });
    expect(String(records[1]?.msg)).toMatch(/^Log file .* cannot be written: .*\(EEXIST\)/);
  });

  it("a console stream that throws loses its line, not the caller", async () => {
    const { log } = createLogger({ level: "info", format: "classic", stream: { write: () => { throw new Error("EIO"); } } });
    expect(() => log.error({ err: new Error("x") }, "still fine")).not.toThrow();
  });
});

