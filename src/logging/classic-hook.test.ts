import { describe, expect, it } from "vitest";
import type { Logger } from "../core/logger.ts";
import { createLogger } from "./create-logger.ts";

/**
 * Classic lines without debug fields are formatted straight from the log call; the JSON way is the reference. Every
 * call shape below must print the same line both ways (the timestamp aside).
 */
function linesOf(directClassic: boolean, calls: (log: Logger) => void, secrets: string[] = []): string[] {
  const chunks: string[] = [];
  const { log } = createLogger({
    level: "info",
    format: "classic",
    stream: { write: (line: string) => chunks.push(line) },
    secrets,
    directClassic,
  });
  calls(log);
  return chunks.map((line) => line.replace(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2},\d{3}/, "<time>"));
}

const boom = (): Error => Object.assign(new TypeError("boom"), { code: "E_BOOM" });

const CASES: Record<string, (log: Logger) => void> = {
  "a message": (log) => log.info("Scan request from Sonarr for '/data/TV/Show/Season 01/x.mkv'."),
  "fields and a message": (log) => log.info({ folder: "/data/TV", count: 2 }, "Added to the queue"),
  "a child's component and id": (log) => log.child({ component: "plex" }).warn({ id: 12345 }, "Plex is busy"),
  "an id on the child": (log) => log.child({ component: "QUEUE", id: "r-9" }).info("Merged"),
  "a call's component over the child's": (log) => log.child({ component: "WEB" }).info({ component: "drive" }, "x"),
  "an undefined id falls back to the child's": (log) => log.child({ component: "A", id: 7 }).info({ id: undefined }, "y"),
  "a grandchild": (log) => log.child({ component: "A" }).child({ id: 3 }).error("deep"),
  "an error as the first argument": (log) => log.error(boom()),
  "an error with a message": (log) => log.error(boom(), "Scan failed"),
  "an err field": (log) => log.error({ err: boom(), folder: "/x" }, "Scan failed"),
  "an err field without a message": (log) => log.error({ err: boom() }),
  "an err that is not an Error": (log) => log.warn({ err: "plain text" }, "odd"),
  "a msg field": (log) => log.info({ msg: "from the object" }),
  "a msg field and a message": (log) => log.info({ msg: "object" }, "argument wins"),
  "an empty object": (log) => log.info({}),
  "printf-style arguments (pino's own way)": (log) => log.info("%s scanned %d files", "Plex", 3),
  "a newline in a message cannot forge a line": (log) => log.info("a\nb\r\nc"),
  "every level": (log) => {
    log.warn("w");
    log.error("e");
    log.fatal("f");
  },
  "a secret in the message is scrubbed": (log) => log.info("GET /library?X-Plex-Token=abcdefgh1234&x=1 with hunter2-secret"),
};

describe("classic lines straight from the log call", () => {
  it.each(Object.entries(CASES))("%s: the same line as the JSON way", (_name, calls) => {
    const direct = linesOf(true, calls, ["hunter2-secret"]);
    const viaJson = linesOf(false, calls, ["hunter2-secret"]);
    expect(direct.length).toBeGreaterThan(0);
    expect(direct).toEqual(viaJson);
  });

  it("prints what a reader expects", () => {
    const lines = linesOf(true, (log) => {
      log.child({ component: "web" }).info({ id: 4 }, "Client '10.0.0.2' made a test request, event: 'Test'");
      log.error(boom(), "Scan failed");
      log.info("token hunter2-secret");
    }, ["hunter2-secret"]);
    expect(lines).toEqual([
      "<time> - INFO - WEB [4]: Client '10.0.0.2' made a test request, event: 'Test'\n",
      `<time> - ERROR - AUTOSCAN [${process.pid}]: Scan failed - TypeError: boom\n`,
      `<time> - INFO - AUTOSCAN [${process.pid}]: token <redacted>\n`,
    ]);
  });
});
