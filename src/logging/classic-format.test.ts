import { describe, expect, it } from "vitest";
import { formatClassicLine, formatTimestamp } from "./classic-format.ts";

// Local time, as Python's logging printed it: build the instant from local fields so the test holds in any TZ.
const AT = new Date(2026, 10, 22, 18, 44, 0, 123).getTime();

describe("formatTimestamp", () => {
  it("is YYYY-MM-DD HH:MM:SS,mmm with zero padding", () => {
    expect(formatTimestamp(AT)).toBe("2026-11-22 18:44:00,123");
    expect(formatTimestamp(new Date(2027, 0, 2, 3, 4, 5, 6).getTime())).toBe("2027-01-02 03:04:05,006");
  });
});

describe("formatClassicLine", () => {
  it("prints the classic line users grep", () => {
    const line = formatClassicLine({
      level: 30,
      time: AT,
      pid: 999,
      component: "PLEX",
      id: 12345,
      msg: "Scan requested for '/data/Movies/X (2020)'",
    });
    expect(line).toBe("2026-11-22 18:44:00,123 - INFO - PLEX [12345]: Scan requested for '/data/Movies/X (2020)'\n");
  });

  it.each([
    [10, "TRACE"],
    [20, "DEBUG"],
    [30, "INFO"],
    [40, "WARNING"],
    [50, "ERROR"],
    [60, "CRITICAL"],
  ])("level %i is %s (Python's level names)", (level, name) => {
    expect(formatClassicLine({ level, time: AT, component: "queue", id: 7, msg: "m" })).toBe(
      `2026-11-22 18:44:00,123 - ${name} - QUEUE [7]: m\n`,
    );
  });

  it("uses the process id when the record has no request id, and AUTOSCAN when it has no component", () => {
    expect(formatClassicLine({ level: 30, time: AT, pid: 4321, msg: "Started" })).toBe(
      "2026-11-22 18:44:00,123 - INFO - AUTOSCAN [4321]: Started\n",
    );
  });

  it("appends the other fields as key=value, quoting what needs it", () => {
    const line = formatClassicLine({
      level: 30,
      time: AT,
      pid: 1,
      hostname: "box",
      component: "web",
      msg: "Scan requested",
      folder: "/data/TV/Show Name (2020)/Season 01",
      section: 2,
      upgrade: false,
      paths: ["/a", "/b"],
      plain: "word",
      empty: "",
      skipped: undefined,
    });
    expect(line).toBe(
      '2026-11-22 18:44:00,123 - INFO - WEB [1]: Scan requested folder="/data/TV/Show Name (2020)/Season 01" section=2 ' +
        'upgrade=false paths=["/a","/b"] plain=word empty=""\n',
    );
  });

  it("leaves the fields out when asked (info level: the classic words carry what a reader needs)", () => {
    const record = { level: 30, time: AT, pid: 1, component: "web", msg: "Scan requested", folder: "/data/TV", section: 2 };
    expect(formatClassicLine(record, false)).toBe("2026-11-22 18:44:00,123 - INFO - WEB [1]: Scan requested\n");
  });

  it("prints an error's type and message after the line; its stack only at debug level", () => {
    const err = { type: "TargetUnavailableError", message: "Plex is unreachable", stack: "TargetUnavailableError: Plex is unreachable\n    at x" };
    expect(formatClassicLine({ level: 50, time: AT, pid: 1, component: "plex", msg: "Scan failed", err })).toBe(
      "2026-11-22 18:44:00,123 - ERROR - PLEX [1]: Scan failed - TargetUnavailableError: Plex is unreachable\n",
    );
    expect(formatClassicLine({ level: 20, time: AT, pid: 1, component: "plex", msg: "Scan failed", err })).toBe(
      "2026-11-22 18:44:00,123 - DEBUG - PLEX [1]: Scan failed - TargetUnavailableError: Plex is unreachable\n" +
        "TargetUnavailableError: Plex is unreachable\n    at x\n",
    );
  });

  it("keeps one line per event: a newline in a message or field (a path from a webhook) cannot forge a second line", () => {
    const forged = "/data/x'\n2026-11-22 18:44:01,000 - INFO - PLEX [1]: Finished scan!";
    for (const record of [
      { level: 30, time: AT, pid: 1, msg: `Scan requested for '${forged}'` },
      { level: 30, time: AT, pid: 1, msg: "Scan requested", folder: forged },
      { level: 30, time: AT, pid: 1, msg: "carriage\rreturn" },
    ]) {
      const line = formatClassicLine(record);
      expect(line.endsWith("\n")).toBe(true);
      expect(line.slice(0, -1)).not.toMatch(/[\r\n]/);
    }
  });
});
