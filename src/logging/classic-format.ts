/**
 * The classic one-line format users' tooling greps, kept from plex_autoscan:
 *   `2026-11-22 18:44:00,123 - INFO - PLEX [12345]: Scan requested for '/data/Movies/X (2020)'`
 * `<id>` is the id of the request or queue item the line is about (`id` in the log object), else the process id.
 * Fields beyond the message follow it as ` key=value` when `withFields` is set (debug logging): the classic words
 * already carry what a reader needs, and JSON lines carry every field.
 */
const LEVEL_NAMES: Readonly<Record<number, string>> = {
  10: "TRACE",
  20: "DEBUG",
  30: "INFO",
  40: "WARNING",
  50: "ERROR",
  60: "CRITICAL",
};

const SKIPPED = new Set(["level", "time", "msg", "component", "id", "pid", "hostname", "err"]);

export function formatClassicLine(record: Record<string, unknown>, withFields = true): string {
  const level = LEVEL_NAMES[Number(record.level)] ?? "INFO";
  const component = typeof record.component === "string" ? record.component.toUpperCase() : "AUTOSCAN";
  const id = record.id ?? record.pid ?? process.pid;
  const time = formatTimestamp(typeof record.time === "number" ? record.time : Date.now());
  // A newline inside a message (a path from a webhook) must not forge a second log line.
  const msg = String(record.msg ?? "");
  const message = /[\r\n]/.test(msg) ? msg.replace(/\r/g, "\\r").replace(/\n/g, "\\n") : msg;
  let line = `${time} - ${level} - ${component} [${String(id)}]: ${message}`;
  const extras = withFields ? Object.entries(record).filter(([key, value]) => !SKIPPED.has(key) && value !== undefined) : [];
  if (extras.length) line += ` ${extras.map(([key, value]) => `${key}=${formatValue(value)}`).join(" ")}`;
  line += formatErr(record.err, Number(record.level) <= 20, message);
  return `${line}\n`;
}

/** `YYYY-MM-DD HH:MM:SS,mmm` in local time, as Python's logging printed it. */
export function formatTimestamp(ms: number): string {
  const second = Math.floor(ms / 1000);
  // Lines come in bursts within one second: the date and time up to the second are formatted once per second
  // (local-time offsets change on whole seconds only).
  if (second !== lastSecond) {
    const d = new Date(second * 1000);
    lastSecondText = `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
    lastSecond = second;
  }
  return `${lastSecondText},${pad(Math.floor(ms - second * 1000), 3)}`;
}

let lastSecond = Number.NaN;
let lastSecondText = "";

function pad(n: number, width = 2): string {
  return String(n).padStart(width, "0");
}

function formatValue(value: unknown): string {
  if (typeof value === "string") return /^[^\s"'=]+$/.test(value) ? value : JSON.stringify(value);
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return JSON.stringify(value);
}

/** The error after the line, unless the line already says it (its message, then the stack at debug). */
function formatErr(err: unknown, withStack: boolean, said: string): string {
  if (!err || typeof err !== "object") return "";
  const { message, stack, type } = err as { message?: unknown; stack?: unknown; type?: unknown };
  const text = String(message ?? "");
  const already = text !== "" && said.includes(text);
  if (already && !withStack) return "";
  const head = already ? "" : ` - ${typeof type === "string" ? `${type}: ` : ""}${text}`;
  return withStack && typeof stack === "string" ? `${head}\n${stack}` : head;
}
