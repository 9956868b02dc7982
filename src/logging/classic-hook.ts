import pino, { type LogFn, type Logger } from "pino";
import { formatClassicLine } from "./classic-format.ts";

/**
 * The classic line straight from a log call, for when nothing needs the JSON (classic output, no debug fields): pino
 * would build a JSON line that we parse back only to print five of its fields, which cost more than the rest of a
 * webhook's logging. This is pino's `hooks.logMethod`; it reads the call's arguments the way pino does and passes
 * anything unusual (printf-style arguments, an odd first argument) on to pino, whose line then takes the JSON way.
 * The classic line prints no secret field (only the level, time, message, component, id and error), so the field
 * censor is not needed here; the caller still scrubs the finished line.
 */
export type LogMethodHook = (this: Logger, args: Parameters<LogFn>, method: LogFn, level: number) => void;

interface Bound {
  readonly chindings: string;
  readonly fields: Readonly<Record<string, unknown>>;
}

const CHINDINGS = pino.symbols.chindingsSym;
const serializeErr = pino.stdSerializers.err;

export function classicLogMethod(write: (line: string) => void): LogMethodHook {
  // A child's bindings are parsed once, not per line (pino keeps them as a JSON fragment).
  const bound = new WeakMap<Logger, Bound>();
  const bindingsOf = (logger: Logger): Readonly<Record<string, unknown>> => {
    const chindings = (logger as unknown as Record<symbol, string | undefined>)[CHINDINGS] ?? "";
    let entry = bound.get(logger);
    if (entry?.chindings !== chindings) {
      entry = { chindings, fields: chindings ? (JSON.parse(`{${chindings.slice(1)}}`) as Record<string, unknown>) : {} };
      bound.set(logger, entry);
    }
    return entry.fields;
  };
  return function logMethod(this: Logger, args, method, level) {
    const call = readCall(args as unknown[]);
    if (!call) return method.apply(this, args);
    const bindings = bindingsOf(this);
    const { obj, msg } = call;
    const err = obj.err === undefined ? undefined : (serializeErr(obj.err as Error) as unknown);
    const record: Record<string, unknown> = {
      level,
      time: Date.now(),
      msg: msg ?? obj.msg,
      component: own(obj, bindings, "component"),
      id: own(obj, bindings, "id"),
      pid: own(obj, bindings, "pid"),
      err,
    };
    write(formatClassicLine(record, false));
  };
}

/** The call's field, else the logger's (as in the JSON line, where the call's fields come last and win). */
function own(obj: Record<string, unknown>, bindings: Readonly<Record<string, unknown>>, key: string): unknown {
  return obj[key] === undefined ? bindings[key] : obj[key];
}

/** The object and message of a log call, as pino reads them; undefined for a call that needs pino's own handling. */
function readCall(args: unknown[]): { obj: Record<string, unknown>; msg: unknown } | undefined {
  const [first, second] = args;
  if (typeof first === "string") return args.length === 1 ? { obj: {}, msg: first } : undefined;
  if (typeof first !== "object" || first === null || args.length > 2) return undefined;
  if (first instanceof Error) return { obj: { err: first }, msg: second ?? first.message };
  const obj = first as Record<string, unknown>;
  if (second !== undefined && typeof second !== "string") return undefined;
  const err = obj.err as { message?: unknown } | undefined;
  const msg = second ?? (obj.msg === undefined && err && typeof err === "object" ? err.message : undefined);
  return { obj, msg };
}
