import pino from "pino";
import type { LogFormat, LogLevel, Logger } from "../core/logger.ts";
import { formatClassicLine } from "./classic-format.ts";
import { classicLogMethod } from "./classic-hook.ts";
import { censorSecretFields, createScrubber, type Scrubber } from "./redact.ts";
import { openRotatingFile, type RotatingFile, type RotatingFileOptions } from "./rotating-file.ts";


export interface LoggerOptions {
  readonly level: LogLevel;
  readonly format: LogFormat;
  /** Where lines go: stdout for the server, stderr for CLI commands (their stdout carries results). */
  readonly stream?: "stdout" | "stderr" | { write(line: string): unknown };
  /** An optional rotating log file, always in the classic format. */
  readonly file?: RotatingFileOptions;
  /** Secret values to scrub from every line (Plex token, SERVER_PASS, client secret …). */
  readonly secrets?: readonly (string | undefined)[];
  /**
   * Classic lines without debug fields are formatted straight from the log call (default), not from pino's JSON.
   * False takes the JSON way for every line; the tests compare both.
   */
  readonly directClassic?: boolean;
}

export interface LogHandle {
  readonly log: Logger;
  readonly scrubber: Scrubber;
  /** Writes out anything buffered; call before exit. */
  flush(): void;
  close(): void;
}

export function createLogger(options: LoggerOptions): LogHandle {
  const scrubber = createScrubber(options.secrets ?? []);
  const out = resolveStream(options.stream ?? "stdout");
  const withFields = options.level === "debug" || options.level === "trace";
  const file: RotatingFile | undefined = options.file ? openRotatingFile(options.file) : undefined;

  const destination = {
    write(json: string): void {
      const clean = scrubber.scrub(json);
      // Scrub the classic line too: decoding the JSON turns an escaped secret back into its raw form.
      const classic = options.format === "classic" || file ? scrubber.scrub(toClassic(clean, withFields)) : "";
      out.write(options.format === "json" ? clean : classic);
      file?.write(classic);
    },
  };
  // Nothing reads JSON when every line is a classic one without fields: skip building it.
  const direct = options.format === "classic" && !withFields && options.directClassic !== false;
  const writeClassic = (line: string): void => {
    const clean = scrubber.scrub(line);
    out.write(clean);
    file?.write(clean);
  };
  const log = pino(
    {
      level: options.level,
      ...(direct ? { hooks: { logMethod: classicLogMethod(writeClassic) } } : {}),
      base: { pid: process.pid },
      formatters: { log: (object) => censorSecretFields(object) },
      serializers: { err: pino.stdSerializers.err },
    },
    destination,
  );
  return {
    log,
    scrubber,
    flush: () => flushStream(out),
    close() {
      flushStream(out);
      file?.close();
    },
  };
}

function toClassic(json: string, withFields: boolean): string {
  try {
    return formatClassicLine(JSON.parse(json) as Record<string, unknown>, withFields);
  } catch {
    return json;
  }
}

type Writable = { write(line: string): unknown; flushSync?: () => void };

function resolveStream(stream: NonNullable<LoggerOptions["stream"]>): Writable {
  if (stream === "stdout") return pino.destination({ dest: 1, sync: false, minLength: 0 });
  if (stream === "stderr") return pino.destination({ dest: 2, sync: true });
  return stream;
}

function flushStream(stream: Writable): void {
  try {
    stream.flushSync?.();
  } catch {
    // Nothing left to flush, or the stream is already closed.
  }
}
