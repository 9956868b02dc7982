import initSqlJs from "sql.js";
import type { Database, SqlJsStatic } from "sql.js";

export type { Database, SqlJsStatic };

let loading: Promise<SqlJsStatic> | undefined;

/** sql.js compiles its WebAssembly once per process; the queue's file and the Drive monitor's share the module. */
export function loadSqlJs(): Promise<SqlJsStatic> {
  loading ??= initSqlJs();
  return loading;
}
