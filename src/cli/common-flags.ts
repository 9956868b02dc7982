import type { ParseArgsOptionsConfig } from "node:util";

/** Flags every command takes: where the config and data live, and how to log (plex_autoscan's names kept). */
export const COMMON_FLAGS: ParseArgsOptionsConfig = {
  config: { type: "string" },
  "data-dir": { type: "string" },
  logfile: { type: "string" },
  queuefile: { type: "string" },
  cachefile: { type: "string" },
  loglevel: { type: "string" },
  "log-format": { type: "string" },
  help: { type: "boolean", short: "h" },
};

export const COMMON_FLAG_HELP: Readonly<Record<string, string>> = {
  config: "PATH  config file (env AUTOSCAN_CONFIG or PLEX_AUTOSCAN_CONFIG; default <install dir>/config/config.json)",
  "data-dir": "DIR  queue, tokens, caches and logs (env AUTOSCAN_DATA_DIR; default the config file's folder)",
  logfile: "PATH  server log file, rotated at 2 MiB × 5; 'none' to disable (env AUTOSCAN_LOGFILE; default autoscan.log)",
  queuefile: "PATH  scan queue database (env AUTOSCAN_QUEUEFILE; default queue.db)",
  cachefile: "PATH  drive cache database (env AUTOSCAN_CACHEFILE; default cache.db)",
  loglevel: "LEVEL  DEBUG, INFO, WARNING or ERROR (env AUTOSCAN_LOGLEVEL; default INFO)",
  "log-format": "FMT  'classic' lines or 'json' lines (env AUTOSCAN_LOG_FORMAT; default classic)",
  help: "show this help",
};
