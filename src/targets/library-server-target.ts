import type { Clock } from "../core/clock.ts";
import { TargetUnavailableError } from "../core/errors.ts";
import type { Logger } from "../core/logger.ts";
import type { ScanContext, ScanOutcome, Target } from "../core/target.ts";
import { libraryNames, type LibraryFolderCache } from "./library-folders.ts";
import type { UpdateType } from "./update-type.ts";

/**
 * The policy shared by Jellyfin and Emby: a folder in no library of the server is a logged skip (the server would
 * take the call and do nothing: the words are Plex's "Unable to map"); otherwise one `POST /Library/Media/Updated`
 * for the folder, whatever number of libraries hold it (the server finds them itself from the path).
 */
/** What configures a Jellyfin or Emby target (`TARGETS.<name>`); each adds what its own API needs. */
export interface LibraryServerConfig {
  /** The target's name in logs and the queue (`jellyfin`, `emby`). */
  readonly name: string;
  /** `TARGETS.<name>.URL`, e.g. `http://jellyfin:8096`. */
  readonly url: string;
  /** `TARGETS.<name>.TOKEN`: an API key, sent only in the header the server reads. */
  readonly token: string;
  /** `TARGETS.<name>.TIMEOUT` in ms (default 30 s). */
  readonly timeoutMs?: number;
  readonly clock: Clock;
  readonly log: Logger;
  /** The setting named when the key is refused (default `TARGETS.<name>.TOKEN`). */
  readonly tokenKey?: string;
  /** The setting named when the server does not know a route (default `TARGETS.<name>.URL`). */
  readonly urlKey?: string;
  /** Library list refresh (default 5 min) and refresh on a miss (at most every 10 s). */
  readonly libraryRefreshMs?: number;
  readonly libraryMissRefreshMs?: number;
}

export interface LibraryServerTargetOptions {
  readonly name: string;
  /** `Jellyfin 'jellyfin'`, for messages. */
  readonly label: string;
  readonly libraries: LibraryFolderCache;
  /** Sends the update; resolves once the server accepted it. */
  readonly send: (folder: string, updateType: UpdateType, signal: AbortSignal) => Promise<void>;
  readonly updateType: (sources: ScanContext["sources"]) => UpdateType;
  readonly isAvailable: () => Promise<boolean>;
  /** The `TARGET` component's logger. */
  readonly log: Logger;
}

export function createLibraryServerTarget(options: LibraryServerTargetOptions): Target {
  const { name, label, libraries, log } = options;
  return {
    name,
    async scan(folder, context): Promise<ScanOutcome> {
      const fields = { target: name, path: folder };
      const matched = await libraries.resolve(folder, context.signal);
      if (matched.length === 0) {
        log.warn(fields, `Unable to map '${folder}' to a ${label} library.`);
        return { status: "skipped", reason: `the folder is in no ${name} library` };
      }
      if (context.signal.aborted) throw new TargetUnavailableError(`Shutting down before the scan was sent to ${label}`);
      const updateType = options.updateType(context.sources);
      await options.send(folder, updateType, context.signal);
      const names = libraryNames(matched);
      const where = `librar${names.length > 1 ? "ies" : "y"} ${names.map((n) => `'${n}'`).join(", ")}`;
      log.info({ ...fields, libraries: names, updateType }, `Scan requested for '${folder}' in ${label}, ${where} (${updateType})`);
      return { status: "scanned", detail: `${where}; ${updateType}` };
    },
    isAvailable: options.isAvailable,
  };
}
