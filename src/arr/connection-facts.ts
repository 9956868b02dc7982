import type { ArrType } from "./arr-type.ts";

/**
 * What autoscan's connection in an *arr app is, in the words of the apps' notification API (read in their source:
 * `src/{Sonarr,Radarr}.Api.V3/Notifications/NotificationResource.cs`, `src/{Lidarr,Readarr}.Api.V1/Notifications/
 * NotificationResource.cs`, `src/NzbDrone.Core/Notifications/Webhook/WebhookSettings.cs` and `WebhookMethod.cs`; the
 * full list of facts is at the top of test/support/fake-arr/notifications.ts):
 * - a connection is a provider resource: `name`, `implementation` (`Webhook`), `configContract` (`WebhookSettings`),
 *   `fields` (`[{name, value}]`: `url`, `method` 1 = POST / 2 = PUT, `username`, `password`, and `headers` in Sonarr
 *   v4, Radarr and Lidarr), `tags`, and one boolean per event (`onDownload` …);
 * - there is no "enabled" switch: a connection is enabled when any `on…` event is ticked (the app's
 *   `NotificationDefinition.Enable`), and the apps show it as "Disabled" when none is.
 */
export const CONNECTION_NAME = "autoscan";
export const WEBHOOK_IMPLEMENTATION = "Webhook";
export const WEBHOOK_CONFIG_CONTRACT = "WebhookSettings";
/** `WebhookMethod.POST`. */
export const METHOD_POST = 1;
/** Grabs are not scanned (the file is not there yet): autoscan's connection leaves it off. */
export const GRAB_FLAG = "onGrab";

export interface EventFlag {
  /** The resource's property (`onDownload`). */
  readonly flag: string;
  /** The check box as the app labels it (`On File Import`), as `autoscan webhook-url` and the console list it. */
  readonly label: string;
}

/**
 * The events autoscan scans on, per app: an import, an upgrade, a rename, the deletes. Sonarr's "On Import Complete"
 * (v4.0.6+) is left off: with "On File Import" it would report each import twice.
 */
export const EVENT_FLAGS: Readonly<Record<ArrType, readonly EventFlag[]>> = {
  sonarr: [
    { flag: "onDownload", label: "On File Import" },
    { flag: "onUpgrade", label: "On File Upgrade" },
    { flag: "onRename", label: "On Rename" },
    { flag: "onSeriesDelete", label: "On Series Delete" },
    { flag: "onEpisodeFileDelete", label: "On Episode File Delete" },
    { flag: "onEpisodeFileDeleteForUpgrade", label: "On Episode File Delete For Upgrade" },
  ],
  radarr: [
    { flag: "onDownload", label: "On File Import" },
    { flag: "onUpgrade", label: "On File Upgrade" },
    { flag: "onRename", label: "On Rename" },
    { flag: "onMovieDelete", label: "On Movie Delete" },
    { flag: "onMovieFileDelete", label: "On Movie File Delete" },
    { flag: "onMovieFileDeleteForUpgrade", label: "On Movie File Delete For Upgrade" },
  ],
  lidarr: [
    { flag: "onReleaseImport", label: "On Release Import" },
    { flag: "onUpgrade", label: "On Upgrade" },
    { flag: "onRename", label: "On Rename" },
    { flag: "onArtistDelete", label: "On Artist Delete" },
    { flag: "onAlbumDelete", label: "On Album Delete" },
  ],
  readarr: [
    { flag: "onReleaseImport", label: "On Release Import" },
    { flag: "onUpgrade", label: "On Upgrade" },
    { flag: "onRename", label: "On Rename" },
    { flag: "onAuthorDelete", label: "On Author Delete" },
    { flag: "onBookDelete", label: "On Book Delete" },
    { flag: "onBookFileDelete", label: "On Book File Delete" },
    { flag: "onBookFileDeleteForUpgrade", label: "On Book File Delete For Upgrade" },
  ],
};

/** An event property: `on` and a capital (`includeHealthWarnings` is not one). */
export function isEventFlag(key: string): boolean {
  return /^on[A-Z]/.test(key);
}

/**
 * The health check that lists connections the app stopped using after failed deliveries (`NotificationStatusCheck`,
 * Sonarr v4, Radarr, Lidarr, Readarr; not Sonarr v3): a warning "Notifications unavailable due to failures: <names>",
 * or an error "All notifications are unavailable due to failures" when every connection is held back.
 */
export const NOTIFICATION_STATUS_SOURCE = "NotificationStatusCheck";
