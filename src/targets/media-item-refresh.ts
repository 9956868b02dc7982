import type { Logger } from "../core/logger.ts";
import type { RefreshWish } from "../core/scan.ts";
import type { ItemRefresher, RefreshOutcome } from "../core/target.ts";
import type { MediaLibraryLookup } from "./library-lookup.ts";
import type { MediaRequest, MediaResponse } from "./media-http.ts";

/**
 * Refresh in place on Jellyfin and Emby: the item whose `Path` is the file (the landed check's own walk,
 * `library-lookup.ts` `locate`), then `POST /Items/{id}/Refresh` for that item only (refresh-fastpath-targets.md §2, §3):
 * - both modes sent explicitly: Jellyfin's API defaults them to `None`, which re-reads nothing. `FullRefresh` for the
 *   metadata re-runs the local providers, the media probe among them, so a file replaced under the same name gets its
 *   new streams and a subtitle added beside it is found; `Default` for the images fills what is missing without
 *   downloading them all again. `ReplaceAllMetadata=false` keeps what the user edited or locked.
 * - Jellyfin has no `Recursive` parameter (it is ignored); Emby takes one and gets `false`: one item, never a library.
 * - Jellyfin's route needs an admin token (`RequiresElevation`); an API key is one.
 * Sent once the landed look saw the file, so the server's own scan has run.
 */
export interface MediaItemRefresherOptions {
  readonly call: (method: "GET" | "POST", route: string, request?: MediaRequest) => Promise<MediaResponse>;
  readonly lookup: Pick<MediaLibraryLookup, "locate">;
  /** Emby: send `Recursive=false`; Jellyfin has no such parameter. */
  readonly recursiveParam: boolean;
  /** `Jellyfin 'jellyfin'`, for messages. */
  readonly label: string;
  readonly log?: Logger;
}

export function refreshQuery(recursiveParam: boolean): Record<string, string> {
  return {
    MetadataRefreshMode: "FullRefresh",
    ImageRefreshMode: "Default",
    ReplaceAllMetadata: "false",
    ReplaceAllImages: "false",
    ...(recursiveParam ? { Recursive: "false" } : {}),
  };
}

export function createMediaItemRefresher(options: MediaItemRefresherOptions): ItemRefresher {
  return {
    async refresh(files: readonly string[], wish: RefreshWish, signal: AbortSignal): Promise<RefreshOutcome> {
      const located = await options.lookup.locate(files, signal);
      const ids = [...new Set([...located.values()].filter((id): id is string => id !== undefined))];
      const missing = files.filter((file) => located.get(file) === undefined);
      for (const id of ids) {
        await options.call("POST", `/Items/${encodeURIComponent(id)}/Refresh`, { query: refreshQuery(options.recursiveParam), signal });
        options.log?.debug({ itemId: id, wish }, `Refresh sent to ${options.label} for item ${id}`);
      }
      const detail = `item${ids.length === 1 ? "" : "s"} ${ids.join(", ")} re-read (metadata FullRefresh, images Default)${
        missing.length > 0 ? `; no item for ${missing.map((f) => `'${f}'`).join(", ")}` : ""
      }`;
      return { refreshed: ids.length, missing, detail };
    },
  };
}
