import type { Logger } from "../core/logger.ts";
import type { ScanRequest } from "../core/scan.ts";
import type { DiskEntry } from "../paths/disk-probe.ts";
import { normalizeSeparators, withoutTrailingSlash } from "../paths/normalize.ts";
import { findSpelling } from "../paths/spelling.ts";

/**
 * A path of `unknown` kind (a manual `filepath`, `?path=`, plex_autoscan's queue) is looked up on disk once it is
 * stored and answered (the queue does it in the background, `scan-queue.ts`), because its name says nothing reliable:
 * `The.Matrix.1999.1080p` and `Show.S01` look like files and are folders. A file → kind `file` (its requests move to
 * its folder); a folder → kind `folder`. When the disk cannot tell (not found, not answering, no answer within
 * `timeoutMs`), the request stays `unknown` and waits as given: a folder naming itself, never widened above the
 * deepest folder it names (`requestFolder` in `rules/enqueue.ts`); the file check looks again when it is due.
 *
 * The path is looked up under each of its local forms (`SERVER_FILE_EXIST_PATH_MAPPINGS`, then the
 * `SERVER_PATH_MAPPINGS` forms), each under its Unicode spellings, through `statPath`: the service's `DiskProbe`,
 * whose stats have a timeout and share the file checks' slots. The request keeps its received bytes.
 */
export interface KindResolverOptions {
  /** Server form → the forms under which autoscan finds the path on its own disk, best first (`localForms`). */
  readonly localForms: (serverPath: string) => readonly string[];
  /** What is at a local path: the shared `DiskProbe`'s `stat`. */
  readonly statPath: (localPath: string) => Promise<DiskEntry>;
  readonly log: Logger;
  /** The longest a request waits for its answer, all forms and spellings together (default 5000 ms). */
  readonly timeoutMs?: number;
}

export type KindResolver = (request: ScanRequest) => Promise<ScanRequest>;

export function createKindResolver(options: KindResolverOptions): KindResolver {
  const log = options.log.child({ component: "QUEUE" });
  const timeoutMs = Math.max(1, options.timeoutMs ?? 5_000);

  async function lookUp(path: string): Promise<"file" | "directory" | undefined> {
    for (const local of options.localForms(path)) {
      const found = await findSpelling(local, options.statPath);
      if (found.entry === "file" || found.entry === "directory") return found.entry;
    }
    return undefined;
  }

  return async (request) => {
    if (request.kind !== "unknown") return request;
    const tidy = normalizeSeparators(request.path);
    if (tidy.length > 1 && tidy.endsWith("/")) return { ...request, kind: "folder" };
    const path = withoutTrailingSlash(tidy);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<"late">((resolve) => (timer = setTimeout(() => resolve("late"), timeoutMs)));
    const found = await Promise.race([lookUp(path).catch(() => undefined), late]).finally(() => clearTimeout(timer));
    if (found === "file") return { ...request, kind: "file" };
    if (found === "directory") return { ...request, kind: "folder" };
    const why = found === "late" ? `no answer from the disk within ${timeoutMs} ms` : "not found on disk";
    log.debug({ path }, `'${path}' is scanned as given (${why}); the file check looks again`);
    return request;
  };
}
