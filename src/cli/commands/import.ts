import { systemClock } from "../../core/clock.ts";
import { UsageError } from "../../core/errors.ts";
import { createLivePathMapper } from "../../paths/mapping.ts";
import { openPlexAutoscanQueue, type PlexAutoscanQueue } from "../../queue/plex-autoscan-file.ts";
import { describeCounts, describeDamage, importKey, importPlexAutoscanQueue } from "../../queue/plex-autoscan-import.ts";
import { previewPlexAutoscanQueue } from "../../queue/plex-autoscan-preview.ts";
import { booleanFlag, stringFlag, type CommandIO, type CommandSpec } from "../command.ts";
import { loadRuntime } from "../runtime.ts";
import { newInstanceId } from "../../core/instance-id.ts";
import { openQueue } from "../wiring/open-queue.ts";

/** How many paths a --dry-run lists without --all. */
const LISTED = 20;

/**
 * `autoscan import --from-plex-autoscan PATH`: plex_autoscan's queue file into the queue the config names (the file
 * in the data directory, or PostgreSQL), the same import a first start does with a plex_autoscan `queue.db` in place,
 * for those who want it done before the first start. The file is only read.
 */
export const importCommand: CommandSpec = {
  usage: "autoscan import --from-plex-autoscan PATH [--dry-run [--all]] [--config PATH]",
  description:
    "Reads plex_autoscan's queue (its queue.db: the queueitemmodel or scan_item table) and queues every row as the " +
    "request plex_autoscan would have scanned, merged with what already waits. Paths are taken as plex_autoscan " +
    "stored them (already in Plex's form); whether each is a file or a folder is found by the file checks later. " +
    "A damaged file gives the rows that can still be read, and the summary says which could not be. " +
    `--dry-run lists the first ${String(LISTED)} paths it would bring (--all: every one, one per line) and stores nothing. ` +
    "With the embedded queue, autoscan must not be running (it holds the queue); with SERVER_DATABASE_URL it may. " +
    "Exit codes: 0 imported (or, with --dry-run, read); 1 the queue could not be opened or stored; 2 bad usage, " +
    "not a plex_autoscan queue, or not a file (a FIFO, a directory: refused without opening it).",
  options: { "from-plex-autoscan": { type: "string" }, "dry-run": { type: "boolean" }, all: { type: "boolean" } },
  optionHelp: {
    "from-plex-autoscan": "PATH  plex_autoscan's queue file (queue.db)",
    "dry-run": `read the file, say what would be imported and list the first ${String(LISTED)} paths; store nothing`,
    all: "with --dry-run: list every path, not only the first ones",
  },
  async run(input) {
    const { values, io } = input;
    const path = stringFlag(values, "from-plex-autoscan");
    if (path === undefined || path === "") throw new UsageError("--from-plex-autoscan PATH is required (plex_autoscan's queue.db)");
    const dryRun = booleanFlag(values, "dry-run");
    // Checked before the file is read: an import stores every row and lists none, so --all alone would be a surprise.
    if (booleanFlag(values, "all") && !dryRun) {
      throw new UsageError("--all lists the paths of a --dry-run: add --dry-run to see every path (an import stores them all and lists none)");
    }
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
      if (dryRun) return listImport(source, booleanFlag(values, "all"), io);
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

/**
 * Reads every row and says what an import would do: the counts on the first line, then the paths it would bring (the
 * first ones, or with --all every one), one per line; stores nothing, opens no queue.
 */
function listImport(source: PlexAutoscanQueue, all: boolean, io: CommandIO): number {
  const preview = previewPlexAutoscanQueue(source, all ? Infinity : LISTED);
  const { requests, distinct, skipped, unreadable } = preview;
  const damage = describeDamage({ rows: requests + skipped, queued: 0, merged: 0, skipped, unreadable });
  const more = distinct - preview.paths.length;
  io.stdout.write(
    `Would import ${String(requests)} scan request(s) for ${String(distinct)} distinct path(s) from '${source.path}'` +
      `${skipped > 0 ? `; ${String(skipped)} row(s) skipped (not a full path)` : ""}.${damage} Nothing was stored (--dry-run).\n` +
      preview.paths.map((path) => `  ${printable(path)}\n`).join("") +
      (more > 0 ? `  … and ${String(more)} more (--all to list every one)\n` : ""),
  );
  return 0;
}

/** A path as it can be shown on one line: a control character (a newline in a file name) as its escape. */
function printable(path: string): string {
  return path.replace(/[\u0000-\u001f\u007f]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
