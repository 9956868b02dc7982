import type { Clock } from "../../core/clock.ts";
import { describeError } from "../../core/errors.ts";
import type { Logger } from "../../core/logger.ts";
import type { DiskEntry } from "../../paths/disk-probe.ts";
import type { AnalyzeType } from "./analyze.ts";

/**
 * Can Plex's library database (`PLEX_DATABASE_PATH`) be used now? Analysis finds the scanned items' ids there and
 * emptying the trash counts the deleted items there; Plex's HTTP API has no documented way to map a file to its item.
 * The default Docker setup does not mount that file. With only analysis wanting it (its default), that is no fault:
 * one INFO line at start says analysis is off and how to turn it on, and scans carry no note about it. When the file
 * is there but cannot be read, or emptying the trash (which the user turned on) needs it, a WARNING says so once with
 * the fixes, and each scan notes the skipped steps. A file that shows up later (a mount that comes up late) is used:
 * looked for again when a scan asks, at most once per `recheckMs`. Looking never hangs: the file is looked at through
 * the bounded disk probe before SQLite opens it.
 */
export interface LibraryGateOptions {
  /** `PLEX_DATABASE_PATH` as set ("" = not set). */
  readonly path: string;
  /** Opens the database if it is not open yet, or throws why it cannot; absent when `path` is "". */
  readonly library?: { open(): void; close(): void };
  /** A bounded look at the file (the service's disk probe); never rejects. */
  readonly stat: (path: string) => Promise<DiskEntry>;
  /** What needs the database, for the message. */
  readonly analyzeType: AnalyzeType;
  readonly emptyTrash: boolean;
  readonly clock: Clock;
  readonly log: Logger;
  /** Looks again at most this often while the database cannot be used (default 60 s). */
  readonly recheckMs?: number;
}

export interface LibraryGateState {
  /** Undefined until the first look has answered. */
  readonly usable: boolean | undefined;
  readonly problem?: string;
  /** Not usable, and that is the default setup (no file, only analysis wants it): nothing to note per scan. */
  readonly quiet: boolean;
}

export interface LibraryGate {
  /** Whether the database can be read now. Cheap: a failed look is repeated at most once per `recheckMs`. */
  usable(): Promise<boolean>;
  /** A read failed after the database had opened: drops the handle and looks again now. True if it is usable. */
  failed(error: unknown): Promise<boolean>;
  state(): LibraryGateState;
}

const NO_FILE = "no such file";

export function createLibraryGate(options: LibraryGateOptions): LibraryGate {
  const log = options.log.child({ component: "PLEX" });
  const { clock, library, path } = options;
  const recheckMs = options.recheckMs ?? 60_000;
  let usable: boolean | undefined;
  let problem: string | undefined;
  let quiet = false;
  let lastLook = Number.NEGATIVE_INFINITY;
  let looking: Promise<boolean> | undefined;

  /** Why the database cannot be used now, or undefined when it can. */
  async function why(): Promise<string | undefined> {
    if (!library) return "PLEX_DATABASE_PATH is empty";
    const entry = await options.stat(path);
    if (entry === "missing") return NO_FILE;
    if (entry === "unanswered") return "the disk did not answer";
    if (entry === "directory") return "it is a folder, not Plex's database file";
    try {
      library.open();
      return undefined;
    } catch (error) {
      return describeError(error);
    }
  }

  function look(): Promise<boolean> {
    looking ??= (async () => {
      const before = usable;
      const reason = await why();
      lastLook = clock.now();
      usable = reason === undefined;
      problem = reason;
      if (usable && before === false) {
        quiet = false;
        log.info({ path }, "Plex's database can be read now (PLEX_DATABASE_PATH); analysis and trash checks are back on");
      } else if (!usable && before === undefined && reason === NO_FILE && !options.emptyTrash) {
        quiet = true;
        log.info(
          { path },
          `Analysis after a scan is off: Plex's database is not at PLEX_DATABASE_PATH '${path}'. To turn it on, mount Plex's ` +
            "database there read-only (in Docker, a volume of Plex's 'Databases' folder); it is used as soon as it appears.",
        );
      } else if (!usable && before !== false) {
        log.warn({ path, problem: reason }, message(before === undefined ? "start" : "lost", reason ?? ""));
      }
      return usable;
    })().finally(() => {
      looking = undefined;
    });
    return looking;
  }

  function message(when: "start" | "lost", reason: string): string {
    const steps = [
      ...(options.analyzeType !== "off" ? [`analysis (PLEX_ANALYZE_TYPE "${options.analyzeType}")`] : []),
      ...(options.emptyTrash ? ["emptying the trash (PLEX_EMPTY_TRASH)"] : []),
    ].join(" and ");
    const off = [
      ...(options.analyzeType !== "off" ? ['PLEX_ANALYZE_TYPE to "off"'] : []),
      ...(options.emptyTrash ? ["PLEX_EMPTY_TRASH to false"] : []),
    ].join(" and ");
    const where = library ? `Plex's database at PLEX_DATABASE_PATH '${path}'` : "Plex's database";
    const fix = library
      ? `Mount Plex's database read-only at that path (it is used as soon as it appears), or set ${off}.`
      : `Set PLEX_DATABASE_PATH to Plex's database mounted read-only, or set ${off}.`;
    const head = when === "start" ? `Cannot read ${where} (${reason})` : `Can no longer read ${where} (${reason})`;
    return `${head}: ${steps} after a scan will be skipped. ${fix}`;
  }

  return {
    async usable() {
      if (usable === true) return true;
      if (looking) return looking;
      if (usable === false && (!library || clock.now() - lastLook < recheckMs)) return false;
      return look();
    },
    async failed(error) {
      if (!library) return false;
      log.debug({ err: error }, "A read of Plex's database failed; looking at the file again");
      library.close();
      return looking ?? look();
    },
    state: () => ({ usable, quiet: quiet && usable === false, ...(problem !== undefined ? { problem } : {}) }),
  };
}
