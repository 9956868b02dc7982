import { ARR_APPS } from "../../intake/webhook.ts";

/**
 * Label values, each bounded to a fixed set: a Prometheus series exists per label combination, and a sender (or a
 * URL label such as `/<SERVER_PASS>/4k`) must not be able to create new ones. Anything unknown becomes `other`.
 */

const SOURCES: readonly [RegExp, string][] = [
  [/^sonarr\b/i, "sonarr"],
  [/^radarr\b/i, "radarr"],
  [/^lidarr\b/i, "lidarr"],
  [/^readarr\b/i, "readarr"],
  [/^sportarr\b/i, "sportarr"],
  [/^whisparr\b/i, "whisparr"],
  [/^manual\b/i, "manual"],
  [/^google drive\b/i, "drive"],
  [/^trigger$/, "trigger"],
  [/^api$/, "api"],
  [/^unknown\b/i, "unknown"],
];

/** `Sonarr (4k)` → `sonarr`; `Google Drive` → `drive`; a route's own name (`trigger`, `api`) as it is. */
export function sourceLabel(source: string): string {
  for (const [pattern, label] of SOURCES) if (pattern.test(source)) return label;
  return "other";
}

/** Every event the *arr apps send that we know of, the manual and Drive ones, the API's commands, and our own words
 *  for a request that had none (`invalid`: unreadable, `none`: refused before its event was read). */
const EVENTS: ReadonlySet<string> = new Set([
  ...ARR_APPS.flatMap((app) => [...app.scanEvents]),
  ...["Upgrade", "Test", "Manual", "Grab", "Health", "HealthRestored", "ApplicationUpdate", "ManualInteractionRequired"],
  ...["SeriesAdd", "MovieAdded", "ArtistAdd", "AuthorAdded", "DownloadFailure", "ImportFailure", "AlbumDownload"],
  ...["queue_count", "queue", "history", "retry", "delete", "reset_page_token", "clear_drive_cache"],
  ...["Change", "invalid", "none"],
]);

export function eventLabel(event: string): string {
  return EVENTS.has(event) ? event : "other";
}

/** 200 → `2xx`. */
export function statusClass(status: number): string {
  return status >= 100 && status < 600 ? `${Math.floor(status / 100)}xx` : "other";
}

/** Target names come from our own code and the config (`plex`, `plex-scanner` …); kept short and plain. */
export function nameLabel(name: string): string {
  return /^[A-Za-z0-9_.-]{1,40}$/.test(name) ? name : "other";
}
