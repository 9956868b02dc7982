import type { Logger } from "../core/logger.ts";
import type { LibraryLookup, ScanContext } from "../core/target.ts";
import { TargetAuthError, TargetUnavailableError } from "../core/errors.ts";
import { isWindowsPath, normalizePath } from "../paths/normalize.ts";
import { MediaHttpError, type MediaRequest, type MediaResponse } from "./media-http.ts";
import { parseScanPathAnswer } from "./media-wire-schemas.ts";
import type { ScanPathPlugin } from "./scan-path-plugin.ts";

/**
 * A folder scanned through the targeted-scans plugin's `POST /Library/ScanPath` (`{"Path": …}`), which adds one path
 * under its nearest known parent in seconds instead of waiting for the server's monitor delay.
 *
 * What is sent, never more than needed:
 * - a folder the server does not hold yet: one request, the folder (the plugin creates it and reads what it holds);
 * - a folder it holds: one request per requested file it does not hold yet. The folder itself never: the plugin would
 *   replace the metadata of the folder and of everything in it. Re-reading what the server holds is refresh in place's
 *   job (`Items/{id}/Refresh` for the one item), not the scan's;
 * - a file reported deleted that the server still lists: one request for it (the plugin drops the stale item);
 * - a library folder itself, or a held folder naming no new file: nothing here, the caller sends `Media/Updated`.
 *
 * Answers, read by their `Status` first (targeted-scans v1.9.0, ScanPathController.cs): `Created`, `Refreshed`,
 * `Discovered`, `Removed` = done. `PathNotFound` (Jellyfin: 404 with that body) = the server cannot see the path: done
 * for a deleted file, else an error (retried, then failed in History) naming the mapping. `ParentNotFound` (also 404)
 * = the plugin found no known folder above it: the server's own monitor is asked instead. Jellyfin answers a stale
 * item it removed with 500 `Failed` (its single-path switch has no arm for `Removed`): a deleted file the server no
 * longer lists after that 500 was removed. A 404 that is not the plugin's answer means the route is gone (the plugin
 * was removed): the plugin counts as absent until the next look, and the monitor is asked.
 */
export interface ScanPathInput {
  readonly folder: string;
  readonly context: ScanContext;
  /** The library folders holding `folder` (server form). */
  readonly libraryFolders: readonly string[];
  readonly call: (method: "GET" | "POST", route: string, request?: MediaRequest) => Promise<MediaResponse>;
  /** Whether the server holds a path now (its library lookup, which walks `GET /Items`). */
  readonly lookup: LibraryLookup;
  readonly plugin: ScanPathPlugin;
  /** `Jellyfin 'jellyfin'`. */
  readonly label: string;
  /** The setting to check when the server cannot see a path. */
  readonly mappingsKey: string;
  readonly log: Logger;
}

export type ScanPathResult =
  /** Sent; `detail` says what each path became. */
  | { readonly sent: true; readonly detail: string }
  /** Not for the plugin (or it could not do it): the caller asks the server's monitor, for this reason. */
  | { readonly sent: false; readonly why: string };

export async function scanThroughPlugin(input: ScanPathInput): Promise<ScanPathResult> {
  const { folder, context, label, log } = input;
  const fields = { path: folder };
  if (input.libraryFolders.some((root) => samePath(root, folder) || holds(folder, root))) {
    return { sent: false, why: "the folder is a library folder itself" };
  }
  const deleted = deletedPaths(context);
  const gone = [...deleted.values()];
  const present = [...new Set(context.files.filter((file) => !deleted.has(comparable(file))))];
  const held = await input.lookup.find([...new Set([folder, ...present, ...gone])], context.signal);
  const isHeld = (path: string): boolean => held.get(path) === true;
  const stale = gone.filter(isHeld);
  const fresh = isHeld(folder) ? present.filter((file) => !isHeld(file)) : deleted.has(comparable(folder)) ? [] : [folder];
  const paths = [...fresh, ...stale.filter((path) => !fresh.includes(path))];
  if (paths.length === 0) {
    return { sent: false, why: gone.length > 0 ? `${label} lists none of the deleted files` : `${label} holds the folder already and no new file is named in it` };
  }

  const done: string[] = [];
  for (const path of paths) {
    if (context.signal.aborted) throw new TargetUnavailableError(`Shutting down before the scan was sent to ${label}`);
    const isDeleted = deleted.has(comparable(path));
    let answer: MediaResponse;
    try {
      answer = await input.call("POST", "/Library/ScanPath", { json: { Path: path }, accept: [404, 500], signal: context.signal });
    } catch (error) {
      if (error instanceof TargetAuthError || error instanceof TargetUnavailableError || !(error instanceof MediaHttpError)) throw error;
      return { sent: false, why: `POST /Library/ScanPath answered ${error.status}` };
    }
    const read = parseScanPathAnswer(answer.body);
    if (!read) {
      if (answer.status === 404) {
        const why = "POST /Library/ScanPath is not there (404 without the plugin's answer): was the plugin removed?";
        input.plugin.lost(why);
        log.warn({ ...fields, path }, `${label}: ${why} Scans go through POST /Library/Media/Updated until the next reload or restart.`);
        return { sent: false, why };
      }
      return { sent: false, why: `POST /Library/ScanPath answered ${answer.status} without a status` };
    }
    const status = read.status;
    if (status === "Created" || status === "Refreshed" || status === "Discovered" || status === "Removed") {
      done.push(`${status} '${path}'`);
      continue;
    }
    if (status === "PathNotFound") {
      if (isDeleted) {
        done.push(`already gone '${path}'`);
        continue;
      }
      throw new Error(
        `${label} cannot see '${path}' (TargetedScan: PathNotFound): the file is not there yet as ${label} sees it, or ${input.mappingsKey} does not put it in ${label}'s form`,
      );
    }
    if (status === "ParentNotFound") return { sent: false, why: `TargetedScan found no known folder above '${path}'` };
    // Jellyfin's single-path route answers a removed stale item with 500 `Failed`: gone from the library = removed.
    if (isDeleted && status === "Failed") {
      const after = await input.lookup.find([path], context.signal);
      if (after.get(path) !== true) {
        done.push(`Removed '${path}'`);
        continue;
      }
    }
    return { sent: false, why: `TargetedScan answered ${status} for '${path}'${read.message && read.message !== path ? ` (${read.message})` : ""}` };
  }
  return { sent: true, detail: done.join(", ") };
}

/** The paths every source of which says deleted (comparable form → as sent). */
function deletedPaths(context: ScanContext): Map<string, string> {
  const byPath = new Map<string, boolean>();
  const spelled = new Map<string, string>();
  for (const source of context.sources) {
    const key = comparable(source.path);
    byPath.set(key, (byPath.get(key) ?? true) && source.deleted === true);
    spelled.set(key, source.path);
  }
  const out = new Map<string, string>();
  for (const [key, gone] of byPath) if (gone) out.set(key, spelled.get(key) ?? key);
  return out;
}

function comparable(path: string): string {
  const normal = normalizePath(path);
  const trimmed = normal.length > 1 && normal.endsWith("/") ? normal.slice(0, -1) : normal;
  return isWindowsPath(trimmed) ? trimmed.toLowerCase() : trimmed;
}

function samePath(a: string, b: string): boolean {
  return comparable(a) === comparable(b);
}

/** `folder` holds `path` on whole segments. */
function holds(folder: string, path: string): boolean {
  const f = comparable(folder);
  const p = comparable(path);
  return p !== f && p.startsWith(f.endsWith("/") ? f : `${f}/`);
}
