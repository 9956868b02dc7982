import { systemClock } from "../../core/clock.ts";
import { UsageError } from "../../core/errors.ts";
import { createLivePathMapper } from "../../paths/mapping.ts";
import { openPlexAutoscanQueue, type PlexAutoscanQueue, type UnreadableIds } from "../../queue/plex-autoscan-file.ts";
import { describeCounts, describeDamage, importKey, importPlexAutoscanQueue } from "../../queue/plex-autoscan-import.ts";
import { booleanFlag, stringFlag, type CommandIO, type CommandSpec } from "../command.ts";
import { loadRuntime } from "../runtime.ts";
import { newInstanceId } from "../../core/instance-id.ts";
import { openQueue } from "../wiring/open-queue.ts";

/**
 * `autoscan import --from-plex-autoscan PATH`: plex_autoscan's queue file into the queue the config names (the file
 * in the data directory, or PostgreSQL), the same import a first start does with a plex_autoscan `queue.db` in place,
 * for those who want it done before the first start. The file is only read.
 */
export const importCommand: CommandSpec = {
  usage: "autoscan import --from-plex-autoscan PATH [--dry-run] [--config PATH]",
  description:
    "Reads plex_autoscan's queue (its queue.db: the queueitemmodel or scan_item table) and queues every row as the " +
    "request plex_autoscan would have scanned, merged with what already waits. Paths are taken as plex_autoscan " +
    "stored them (already in Plex's form); whether each is a file or a folder is found by the file checks later. " +
    "A damaged file gives the rows that can still be read, and the summary says which could not be. " +
    "With the embedded queue, autoscan must not be running (it holds the queue); with SERVER_DATABASE_URL it may. " +
    "Exit codes: 0 imported (or, with --dry-run, read); 1 the queue could not be opened or stored; 2 bad usage, " +
    "not a plex_autoscan queue, or not a file (a FIFO, a directory: refused without opening it).",
  options: { "from-plex-autoscan": { type: "string" }, "dry-run": { type: "boolean" } },
  optionHelp: {
    "from-plex-autoscan": "PATH  plex_autoscan's queue file (queue.db)",
    "dry-run": "read the file and say what would be imported; store nothing",
  },
  async run(input) {
    const { values, io } = input;
    const path = stringFlag(values, "from-plex-autoscan");
    if (path === undefined || path === "") throw new UsageError("--from-plex-autoscan PATH is required (plex_autoscan's queue.db)");
    const opened = await openPlexAutoscanQueue(path);
    if (opened.kind === "refused") {
      io.stderr.write(`${opened.reason}. Name plex_autoscan's queue.db (its --queuefile).\n`);
      return 2;
    }
    if (opened.kind !== "queue") {
      io.stderr.write(
        `'${path}' is not a plex_autoscan queue: no such file, not an SQLite database, or it has neither plex_autoscan's ` +
          "queueitemmodel table nor by275's scan_item table. Name plex_autoscan's queue.db (its --queuefile).\n",
      );
      return 2;
    }
    const source = opened.queue;
    try {
      if (booleanFlag(values, "dry-run")) return dryRun(source, io);
      const runtime = await loadRuntime(input);
      if ("exitCode" in runtime) return runtime.exitCode;
      const { config, log } = runtime;
      const mapper = createLivePathMapper({
        mappings: config.SERVER_PATH_MAPPINGS,
        existMappings: config.SERVER_FILE_EXIST_PATH_MAPPINGS,
        log: log.child({ component: "PATHS" }),
      });
      const queue = await openQueue(runtime, systemClock, mapper, undefined, newInstanceId());
      const started = Date.now();
      let lastLine = started;
      try {
        // Kept with each batch: a run stopped half-way goes on after what it stored; forgotten at the end.
        const key = await importKey(path);
        const summary = await importPlexAutoscanQueue({
          source,
          queue,
          key,
          afterRowid: (await queue.importedThrough(key)) ?? 0,
          signal: io.shutdownSignal,
          onBatch(_rowid, progress) {
            if (Date.now() - lastLine < 3_000 || (progress.total !== undefined && progress.done >= progress.total)) return;
            lastLine = Date.now();
            const total = progress.total === undefined ? "" : ` of ${progress.total.toLocaleString("en-US")}`;
            io.stderr.write(`${progress.done.toLocaleString("en-US")}${total} row(s) imported…\n`);
          },
        });
        if (!io.shutdownSignal.aborted) await queue.importRequests([], { key, through: undefined });
        const seconds = ((Date.now() - started) / 1000).toFixed(1);
        const stopped = io.shutdownSignal.aborted ? " Stopped before the end: run the same command again to go on where it stopped." : "";
        io.stdout.write(
          `Imported ${String(summary.queued + summary.merged)} scan request(s) from '${path}' into ${queue.file} in ${seconds} s: ` +
            `${describeCounts(summary)}.${describeDamage(summary)}${stopped}\n`,
        );
        return io.shutdownSignal.aborted ? 1 : 0;
      } finally {
        await queue.close();
      }
    } finally {
      source.close();
    }
  },
};

/** Reads every row and says what an import would do; stores nothing, opens no queue. */
function dryRun(source: PlexAutoscanQueue, io: CommandIO): number {
  let requests = 0;
  let skipped = 0;
  const paths = new Set<string>();
  const unreadable: UnreadableIds[] = [];
  for (const row of source.rows(0)) {
    if ("unreadable" in row) unreadable.push(row.unreadable);
    else if (!row.request) skipped += 1;
    else {
      requests += 1;
      paths.add(row.request.path);
    }
  }
  const damage = describeDamage({ rows: requests + skipped, queued: 0, merged: 0, skipped, unreadable });
  io.stdout.write(
    `Would import ${String(requests)} scan request(s) for ${String(paths.size)} distinct path(s) from '${source.path}'` +
      `${skipped > 0 ? `; ${String(skipped)} row(s) skipped (not a full path)` : ""}.${damage} Nothing was stored (--dry-run).\n`,
  );
  return 0;
}
