import type { BackfillAppStatus } from "../../core/backfill-status.ts";
import type { DriveStatus } from "../../core/drive-status.ts";
import type { QueueItemView } from "../../core/queue-view.ts";
import type { PathPreview } from "../../paths/preview.ts";
import type { WatcherStatus } from "../../watch/folder-watcher.ts";

/**
 * What the console reads, besides the queue port (`QueueAdmin`) every route has. Each is a capability the composition
 * root passes in; a missing one hides what it would show (no Drive page without `drive`, no live updates without
 * `changes`).
 */
export interface ConsoleSources {
  /** Told after every change the queue stored; the console subscribes only while a page is open. */
  readonly changes?: ChangeFeed;
  /** What the dispatcher works on right now (from memory). */
  readonly activity?: () => Activity;
  /** The names of the scan targets, for the queue's "target" column. */
  readonly targets?: () => readonly string[];
  /** The path preview (Scan page, Libraries page, `cmd=preview`). */
  readonly preview?: (path: string, signal?: AbortSignal) => Promise<PathPreview>;
  /**
   * Plex's sections beside `SERVER_PATH_MAPPINGS`, for the Libraries page; `recent`: the folders of recent requests
   * (server form), which show a library folder the apps reach with no mapping (they send Plex's own paths).
   */
  readonly libraries?: (signal?: AbortSignal, recent?: readonly string[]) => Promise<LibrariesReport>;
  /** Google Drive monitoring's state, when `CLOUD.ENABLED`. */
  readonly drive?: () => DriveStatus;
  /** `ARR`: each app's backfill state (the Queue page shows it). */
  readonly backfill?: () => readonly BackfillAppStatus[];
  /** Aborted when the service stops: open event streams end, so the web server can close. */
  readonly closing?: AbortSignal;
  /** Requests no server can scan (no mapping, no library), refused at intake: the Queue page shows them until dismissed. */
  readonly refused?: RefusedPaths;
  /** *arr apps that stopped sending to autoscan (`ARR`): the Queue page says so until they send again. */
  readonly arrProblems?: () => readonly { readonly app: string; readonly detail: string; readonly since: number }[];
  /** *arr apps that send with some events unticked: a quieter note on the Queue page. */
  readonly arrNotes?: () => readonly { readonly app: string; readonly detail: string; readonly since: number }[];
  /** `WATCH`: each folder watcher's state, for the Queue page's panel. */
  readonly watchers?: () => readonly WatcherView[];
  /** Jellyfin and Emby targets: how each sends its scans (the TargetedScan plugin or the server's monitor). */
  readonly scanRoutes?: () => readonly ScanRouteNote[];
}

/** How one Jellyfin or Emby target scans, as its last look at `GET /Plugins` found. */
export interface ScanRouteNote {
  readonly target: string;
  /** `plugin`: `POST /Library/ScanPath`, seconds; `monitor`: `POST /Library/Media/Updated`, after the server's delay. */
  readonly route: "plugin" | "monitor";
  /** One sentence, with how to install the plugin when it is not there. */
  readonly words: string;
}

/** A folder watcher as the console shows it. */
export type WatcherView = WatcherStatus;

export interface RefusedPaths {
  /** Newest first. */
  recent(): readonly { readonly path: string; readonly source: string; readonly reason: string; readonly fix: string; readonly at: number }[];
  dismiss(): void;
}

export interface ChangeFeed {
  /** `listener` runs after each stored change; returns the unsubscribe function. */
  subscribe(listener: () => void): () => void;
}

export interface Activity {
  /** Items whose files are being looked for now. */
  readonly checking: readonly number[];
  /** Items being sent to a target now. */
  readonly scanning: readonly { readonly id: number; readonly target: string }[];
  /** Items held because an anchor file (`SERVER_ANCHORS`) over their folder is missing. */
  readonly held?: readonly { readonly id: number; readonly anchor: string }[];
  /** Items whose disk did not answer: they wait for that mount (no file check is spent meanwhile). */
  readonly waitingForMount?: readonly { readonly id: number; readonly mount: string }[];
}

/** One page of queue items with the number of items that match the query in all. */
export interface ItemPage {
  readonly items: readonly QueueItemView[];
  readonly total: number;
}

/**
 * Where a path lands: the answer of the Scan page's preview and of `cmd=preview`. Defined beside the preview itself
 * (`paths/preview.ts`), which may not import from `web` (the dependency rule).
 */
export type { PathPreview, PreviewProblem } from "../../paths/preview.ts";

export interface LibrariesReport {
  /** Absent when Plex could not be asked (see `error`). */
  readonly sections?: readonly LibrarySection[];
  readonly error?: string;
  readonly mappings: readonly MappingView[];
}

export interface LibrarySection {
  readonly id: string;
  readonly title: string;
  readonly type: string;
  /**
   * `reached`: a mapping reaches the folder. `sentAsIs`: no mapping does, but recent requests lie in it (the apps send
   * Plex's own paths there: nothing to map).
   */
  readonly locations: readonly { readonly path: string; readonly reached: boolean; readonly sentAsIs?: true }[];
}

export interface MappingView {
  /** The server's form (the key of `SERVER_PATH_MAPPINGS`). */
  readonly serverForm: string;
  readonly forms: readonly string[];
  /** The ids of the sections this server form lies in or holds a folder of; empty → flagged (when Plex answered). */
  readonly sections: readonly string[];
}

