import type { Logger } from "../core/logger.ts";
import type { LibraryLookup, ScanContext } from "../core/target.ts";
import { describeError, TargetAuthError, TargetUnavailableError } from "../core/errors.ts";
import { MediaHttpError, type MediaRequest, type MediaResponse } from "./media-http.ts";
import { comparable, holds, samePath } from "./library-lookup.ts";
import { parseScanPathAnswer, parseScanPathsAnswer, type ScanPathAnswer } from "./media-wire-schemas.ts";
import type { ScanPathPlugin } from "./scan-path-plugin.ts";

/**
 * A folder scanned through the targeted-scans plugin's `POST /Library/ScanPath` (`{"Path": …}`), which adds one path
 * under its nearest known parent in seconds instead of waiting for the server's monitor delay.
 *
 * What is sent, never more than needed:
 * - a folder the server does not hold yet: one request, the folder (the plugin creates it and reads what it holds);
 * - a folder it holds: the requested files it does not hold yet (one `POST /Library/ScanPaths` for several, the
 *   plugin's batch route, so a burst into a season stays one request). The folder itself never: the plugin would
 *   replace the metadata of the folder and of everything in it. Re-reading what the server holds is refresh in place's
 *   job (`Items/{id}/Refresh` for the one item), not the scan's;
 * - a file reported deleted that the server still lists: sent too (the plugin drops the stale item);
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
  const { folder, context, label } = input;
  if (input.libraryFolders.some((root) => samePath(root, folder) || holds(folder, root))) {
    return { sent: false, why: "the folder is a library folder itself" };
  }
  const deleted = deletedPaths(context);
  const gone = [...deleted.values()];
  const present = [...new Set(context.files.filter((file) => !deleted.has(comparable(file))))];
  let held: ReadonlyMap<string, boolean>;
  try {
    held = await input.lookup.find([...new Set([folder, ...present, ...gone])], context.signal);
  } catch (error) {
    if (error instanceof TargetAuthError || error instanceof TargetUnavailableError) throw error;
    return { sent: false, why: `could not ask ${label} what it holds: ${describeError(error)}` };
  }
  const isHeld = (path: string): boolean => held.get(path) === true;
  const stale = gone.filter(isHeld);
  const fresh = isHeld(folder) ? present.filter((file) => !isHeld(file)) : deleted.has(comparable(folder)) ? [] : [folder];
  const paths = [...fresh, ...stale.filter((path) => !fresh.includes(path))];
  if (paths.length === 0) {
    return { sent: false, why: gone.length > 0 ? `${label} lists none of the deleted files` : `${label} holds the folder already and no new file is named in it` };
  }

  if (context.signal.aborted) throw new TargetUnavailableError(`Shutting down before the scan was sent to ${label}`);
  const answered = paths.length === 1 ? await sendOne(input, paths[0] ?? folder) : await sendBatch(input, paths);
  if ("why" in answered) return { sent: false, why: answered.why };

  const done: string[] = [];
  for (const path of paths) {
    const read = answered.results.find((result) => samePath(result.path, path));
    if (!read) return { sent: false, why: `TargetedScan gave no answer for '${path}'` };
    const isDeleted = deleted.has(comparable(path));
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
    return { sent: false, why: `TargetedScan answered ${status} for '${path}'${read.message && !samePath(read.message, path) ? ` (${read.message})` : ""}` };
  }
  return { sent: true, detail: done.join(", ") };
}

type Answered = { readonly results: readonly (ScanPathAnswer & { readonly path: string })[] } | { readonly why: string };

/** `POST /Library/ScanPath` for one path: Jellyfin's build answers 404 and 500 with the outcome in the body. */
async function sendOne(input: ScanPathInput, path: string): Promise<Answered> {
  const answer = await post(input, "/Library/ScanPath", { Path: path }, [404, 500]);
  if ("why" in answer) return answer;
  const read = parseScanPathAnswer(answer.body);
  if (read) return { results: [{ ...read, path: read.path ?? path }] };
  return answer.status === 404 ? routeGone(input, "/Library/ScanPath") : { why: `POST /Library/ScanPath answered ${answer.status} without a status` };
}

/** `POST /Library/ScanPaths` for several paths of one folder: one request, one outcome per path (200 always). */
async function sendBatch(input: ScanPathInput, paths: readonly string[]): Promise<Answered> {
  const answer = await post(input, "/Library/ScanPaths", { Paths: paths }, [404]);
  if ("why" in answer) return answer;
  const results = parseScanPathsAnswer(answer.body);
  if (results) return { results };
  return answer.status === 404 ? routeGone(input, "/Library/ScanPaths") : { why: `POST /Library/ScanPaths answered ${answer.status} without results` };
}

async function post(input: ScanPathInput, route: string, json: unknown, accept: readonly number[]): Promise<MediaResponse | { readonly why: string }> {
  try {
    return await input.call("POST", route, { json, accept, signal: input.context.signal });
  } catch (error) {
    if (error instanceof TargetAuthError || error instanceof TargetUnavailableError || !(error instanceof MediaHttpError)) throw error;
    return { why: `POST ${route} answered ${error.status}` };
  }
}

/** A 404 that is not the plugin's answer: the route is gone (the plugin was removed since it was seen). */
function routeGone(input: ScanPathInput, route: string): { readonly why: string } {
  const why = `POST ${route} is not there (404 without the plugin's answer): was the plugin removed?`;
  input.plugin.lost(why);
  input.log.warn({ path: input.folder }, `${input.label}: ${why} Scans go through POST /Library/Media/Updated until the next reload or restart.`);
  return { why };
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

