import { writeSync } from "node:fs";
import pino from "pino";
import type { LogFormat, LogLevel, Logger } from "../core/logger.ts";
import { logContextFields } from "../core/log-context.ts";
import { formatClassicLine } from "./classic-format.ts";
import { censorSecretFields, createScrubber, type Scrubber } from "./redact.ts";
import { openConsoleStream } from "./console-stream.ts";
import { openRotatingFile, type RotatingFileEvent, type RotatingFileOptions } from "./rotating-file.ts";

export interface LoggerOptions {
  readonly level: LogLevel;
  readonly format: LogFormat;
  /** Where lines go: stdout for the server, stderr for CLI commands (their stdout carries results). */
  readonly stream?: "stdout" | "stderr" | { write(line: string): unknown };
  /** An optional rotating log file, always in the classic format; best effort (see rotating-file.ts). */
  readonly file?: RotatingFileOptions;
  /** Secret values to scrub from every line (Plex token, SERVER_PASS, client secret …). */
  readonly secrets?: readonly (string | undefined)[];
}

export interface LogHandle {
  readonly log: Logger;
  readonly scrubber: Scrubber;
  /** Writes out anything buffered; call before exit. */
  flush(): void;
  /** Changes the level of the root logger and of every child made from it (a live config reload). */
  setLevel(level: LogLevel): void;
  /** Waits (at most `ms`) for the lines queued for the log file to be written. */
  settle(ms?: number): Promise<void>;
  close(): void;
}

/**
 * pino builds each line as JSON (its public API: a destination with `write`); the destination scrubs secrets and,
 * for the classic format and the log file, turns the JSON back into the classic line. Nothing here throws at the
 * caller: a console or file that cannot be written loses lines, never a request (console-stream.ts, rotating-file.ts).
 */
export function createLogger(options: LoggerOptions): LogHandle {
  const scrubber = createScrubber(options.secrets ?? []);
  let withFields = options.level === "debug" || options.level === "trace";
  const out = openConsole(options.stream ?? "stdout");
  const fileEvents: RotatingFileEvent[] = [];
  // The file writes in the background: its news is told as soon as it happens, not at the next log call.
  const file = options.file
    ? openRotatingFile(options.file, (event) => {
        fileEvents.push(event);
        queueMicrotask(tellFileEvents);
      })
    : undefined;
  const format = (record: Record<string, unknown>): string =>
    options.format === "json" ? toJsonLine(`${JSON.stringify(record)}\n`) : formatClassicLine(record, withFields);

  /** The file's own news, told once per episode: that it stopped taking lines (console only), that it takes them again. */
  const tellFileEvents = (): void => {
    for (let event = fileEvents.shift(); event; event = fileEvents.shift()) {
      const notice = describeFileEvent(event);
      if (!log.isLevelEnabled(notice.level >= 40 ? "warn" : "info")) continue;
      const record = { level: notice.level, time: Date.now(), pid: process.pid, component: "AUTOSCAN", msg: notice.msg, logFile: event.path };
      out.write(scrubber.scrub(format(record)));
      if (event.kind === "recovered") file?.write(scrubber.scrub(formatClassicLine(record, withFields)));
    }
  };

  const destination = {
    write(json: string): void {
      const clean = scrubber.scrub(json);
      // Scrub the classic line too: decoding the JSON turns an escaped secret back into its raw form.
      const classic = options.format === "classic" || file ? scrubber.scrub(toClassic(clean, withFields)) : "";
      // The console first: it is where the line must not be lost; the file is best effort.
      out.write(options.format === "json" ? toJsonLine(clean) : classic);
      file?.write(classic);
    },
  };
  // Children keep the level they were made with (pino's rule): a reload reaches them through this list.
  const children = new Set<WeakRef<Logger>>();
  let sweepAt = 1024;
  const remember = (child: Logger): void => {
    children.add(new WeakRef(child));
    // Children made per scan are collected with it; their entries are swept whenever the set has doubled.
    if (children.size < sweepAt) return;
    for (const ref of children) if (!ref.deref()) children.delete(ref);
    sweepAt = Math.max(1024, children.size * 2);
  };
  const log = pino(
    {
      level: options.level,
      onChild: remember,
      // The id of the queue item whose work wrote the line (core/log-context.ts); a field of the call wins.
      mixin: logContextFields,
      base: { pid: process.pid },
      formatters: { log: (object) => censorSecretFields(object) },
      serializers: { err: pino.stdSerializers.err },
    },
    destination,
  );
  return {
    log,
    scrubber,
    flush: () => out.flush(),
    setLevel(level) {
      withFields = level === "debug" || level === "trace";
      log.level = level;
      for (const ref of children) {
        const child = ref.deref();
        if (child) child.level = level;
        else children.delete(ref);
      }
    },
    async settle(ms = 1000) {
      if (!file) return;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([file.flushed(), new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
      clearTimeout(timer);
    },
    close() {
      out.flush();
      file?.close();
    },
  };
}

function describeFileEvent(event: RotatingFileEvent): { level: number; msg: string } {
  if (event.kind === "failing") {
    return {
      level: 40,
      msg:
        `Log file ${event.path} cannot be ${event.action}: ${event.reason}; 1 line dropped, and every line after it until ` +
        "the file can be written again (the console still gets them all)",
    };
  }
  const lines = event.dropped === 1 ? "1 line was" : `${event.dropped} lines were`;
  return { level: 30, msg: `Log file ${event.path} is written again; ${lines} dropped while it could not be` };
}

const LEVEL_WORDS: Readonly<Record<string, string>> = { 10: "trace", 20: "debug", 30: "info", 40: "warn", 50: "error", 60: "fatal" };
const PINO_HEAD = /^\{"level":(\d+),"time":(\d+),/;

/**
 * A JSON line as log shippers (Loki, Elastic) expect it: the level as a word and the time in ISO 8601 (UTC). pino
 * writes `{"level":30,"time":<ms>,` first on every line; only that head is rewritten.
 */
export function toJsonLine(json: string): string {
  const head = PINO_HEAD.exec(json);
  if (!head) return json;
  const level = LEVEL_WORDS[head[1] ?? ""] ?? head[1];
  const time = new Date(Number(head[2])).toISOString();
  return `{"level":"${level}","time":"${time}",${json.slice(head[0].length)}`;
}

function toClassic(json: string, withFields: boolean): string {
  try {
    return formatClassicLine(JSON.parse(json) as Record<string, unknown>, withFields);
  } catch {
    return json;
  }
}

interface ConsoleOut {
  /** Never throws. */
  write(line: string): void;
  flush(): void;
}

/** stdout (asynchronous: a slow reader never stalls the server) or stderr (synchronous: CLI commands are short). */
function openConsole(stream: NonNullable<LoggerOptions["stream"]>): ConsoleOut {
  if (typeof stream === "object") {
    return {
      write(line) {
        try {
          stream.write(line);
        } catch {
          // A caller's stream that throws loses the line, not the log call.
        }
      },
      flush: () => undefined,
    };
  }
  if (stream === "stderr") return openConsoleStream({ fd: 2, name: "stderr", async: false });
  return openConsoleStream({ fd: 1, name: "stdout", async: true, report: tellStderr });
}

/** A note about stdout itself, on stderr. */
function tellStderr(text: string): void {
  try {
    writeSync(2, `${text}\n`);
  } catch {
    // stderr cannot be written either: there is nowhere left to say it.
  }
}
