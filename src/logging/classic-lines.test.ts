import { describe, expect, it } from "vitest";
import type { Logger } from "../core/logger.ts";
import { createLogger } from "./create-logger.ts";

/**
 * The classic line for every shape of log call the code uses (and a few it might), through the real logger: pino
 * builds the JSON, the destination prints the classic line from it. The timestamp and the process id are masked.
 */
function linesOf(calls: (log: Logger) => void, secrets: string[] = []): string[] {
  const chunks: string[] = [];
  const { log } = createLogger({ level: "info", format: "classic", stream: { write: (line: string) => chunks.push(line) }, secrets });
  calls(log);
  return chunks.map((line) =>
    line.replace(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2},\d{3}/, "<time>").replace(`[${process.pid}]`, "[<pid>]"),
  );
}

const boom = (): Error => Object.assign(new TypeError("boom"), { code: "E_BOOM" });
const line = (level: string, component: string, id: string, message: string): string => `<time> - ${level} - ${component} [${id}]: ${message}\n`;
const info = (message: string): string => line("INFO", "AUTOSCAN", "<pid>", message);

const CASES: [string, (log: Logger) => void, string[]][] = [
  ["a message", (log) => log.info("Scan request from Sonarr for '/data/TV/Show/Season 01/x.mkv'."), [info("Scan request from Sonarr for '/data/TV/Show/Season 01/x.mkv'.")]],
  ["fields and a message (fields only at debug level)", (log) => log.info({ folder: "/data/TV", count: 2 }, "Added to the queue"), [info("Added to the queue")]],
  ["a child's component and the call's id", (log) => log.child({ component: "plex" }).warn({ id: 12345 }, "Plex is busy"), [line("WARNING", "PLEX", "12345", "Plex is busy")]],
  ["an id on the child", (log) => log.child({ component: "QUEUE", id: "r-9" }).info("Merged"), [line("INFO", "QUEUE", "r-9", "Merged")]],
  ["a call's component over the child's", (log) => log.child({ component: "WEB" }).info({ component: "drive" }, "x"), [line("INFO", "DRIVE", "<pid>", "x")]],
  ["an undefined id falls back to the child's", (log) => log.child({ component: "A", id: 7 }).info({ id: undefined }, "y"), [line("INFO", "A", "7", "y")]],
  ["a grandchild", (log) => log.child({ component: "A" }).child({ id: 3 }).error("deep"), [line("ERROR", "A", "3", "deep")]],
  ["an error as the first argument", (log) => log.error(boom()), [line("ERROR", "AUTOSCAN", "<pid>", "boom")]],
  ["an error with a message", (log) => log.error(boom(), "Scan failed"), [line("ERROR", "AUTOSCAN", "<pid>", "Scan failed - TypeError: boom")]],
  ["an err field", (log) => log.error({ err: boom(), folder: "/x" }, "Scan failed"), [line("ERROR", "AUTOSCAN", "<pid>", "Scan failed - TypeError: boom")]],
  ["an err field without a message", (log) => log.error({ err: boom() }), [line("ERROR", "AUTOSCAN", "<pid>", "boom")]],
  ["an err that is not an Error", (log) => log.warn({ err: "plain text" }, "odd"), [line("WARNING", "AUTOSCAN", "<pid>", "odd")]],
  ["a msg field", (log) => log.info({ msg: "from the object" }), [info("from the object")]],
  ["a msg field and a message", (log) => log.info({ msg: "object" }, "argument wins"), [info("argument wins")]],
  ["an empty object", (log) => log.info({}), [info("")]],
  ["printf-style arguments (pino's own way)", (log) => log.info("%s scanned %d files", "Plex", 3), [info("Plex scanned 3 files")]],
  ["a newline in a message cannot forge a line", (log) => log.info("a\nb\r\nc"), [info("a\\nb\\r\\nc")]],
  [
    "every level",
    (log) => {
      log.warn("w");
      log.error("e");
      log.fatal("f");
    },
    [line("WARNING", "AUTOSCAN", "<pid>", "w"), line("ERROR", "AUTOSCAN", "<pid>", "e"), line("CRITICAL", "AUTOSCAN", "<pid>", "f")],
  ],
  [
    "a secret in the message is scrubbed",
    (log) => log.info("GET /library?X-Plex-Token=abcdefgh1234&x=1 with hunter2-secret"),
    [info("GET /library?X-Plex-Token=<redacted>&x=1 with <redacted>")],
  ],
];

describe("classic lines from every shape of log call", () => {
  it.each(CASES)("%s", (_name, calls, expected) => {
    expect(linesOf(calls, ["hunter2-secret"])).toEqual(expected);
  });

  it("prints what a reader expects", () => {
    const lines = linesOf((log) => {
      log.child({ component: "web" }).info({ id: 4 }, "Client '10.0.0.2' made a test request, event: 'Test'");
      log.error(boom(), "Scan failed");
      log.info("token hunter2-secret");
    }, ["hunter2-secret"]);
    expect(lines).toEqual([
      "<time> - INFO - WEB [4]: Client '10.0.0.2' made a test request, event: 'Test'\n",
      "<time> - ERROR - AUTOSCAN [<pid>]: Scan failed - TypeError: boom\n",
      "<time> - INFO - AUTOSCAN [<pid>]: token <redacted>\n",
    ]);
  });
});
