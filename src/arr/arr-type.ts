/**
 * What differs between the four *arr apps' history APIs (../shared/reference/arr-history.md §1, §3): the API root,
 * the names of the history events that lead to scans, and the webhook event each of them stands for.
 */
export type ArrType = "sonarr" | "radarr" | "lidarr" | "readarr";

export const ARR_TYPES: readonly ArrType[] = ["sonarr", "radarr", "lidarr", "readarr"];

/** A history event, reduced to what autoscan does with it. */
export type HistoryEventKind = "import" | "rename" | "delete" | "other";

export interface ArrTypeFacts {
  /** The app's own name, as in its `appName` and the webhook source: `Sonarr`. */
  readonly appName: string;
  /** `/api/v3` (Sonarr v3 and v4, Radarr) or `/api/v1` (Lidarr, Readarr). */
  readonly apiRoot: string;
  /** The camelCase `eventType` strings (§3, in bold) → what they mean. */
  readonly events: Readonly<Record<string, Exclude<HistoryEventKind, "other">>>;
  /** The filter numbers of those events (they differ per app: Radarr's 6 is a delete, Sonarr's a rename). */
  readonly eventNumbers: Readonly<Record<number, Exclude<HistoryEventKind, "other">>>;
  /** The webhook's `eventType` for a file delete: the event name a backfilled delete carries. */
  readonly deleteWebhookEvent: string;
}

export const ARR_TYPE_FACTS: Readonly<Record<ArrType, ArrTypeFacts>> = {
  sonarr: {
    appName: "Sonarr",
    apiRoot: "/api/v3",
    events: { downloadFolderImported: "import", episodeFileRenamed: "rename", episodeFileDeleted: "delete" },
    eventNumbers: { 3: "import", 5: "delete", 6: "rename" },
    deleteWebhookEvent: "EpisodeFileDelete",
  },
  radarr: {
    appName: "Radarr",
    apiRoot: "/api/v3",
    events: { downloadFolderImported: "import", movieFileRenamed: "rename", movieFileDeleted: "delete" },
    eventNumbers: { 3: "import", 6: "delete", 8: "rename" },
    deleteWebhookEvent: "MovieFileDelete",
  },
  lidarr: {
    appName: "Lidarr",
    apiRoot: "/api/v1",
    events: { trackFileImported: "import", trackFileRenamed: "rename", trackFileDeleted: "delete" },
    eventNumbers: { 3: "import", 5: "delete", 6: "rename" },
    deleteWebhookEvent: "TrackFileDelete",
  },
  readarr: {
    appName: "Readarr",
    apiRoot: "/api/v1",
    events: { bookFileImported: "import", bookFileRenamed: "rename", bookFileDeleted: "delete" },
    eventNumbers: { 3: "import", 5: "delete", 6: "rename" },
    deleteWebhookEvent: "BookFileDelete",
  },
};

/** The app's `eventType` (a camelCase name, compared case-insensitively; a number from an odd build) → its kind. */
export function eventKind(type: ArrType, eventType: string | number): HistoryEventKind {
  const facts = ARR_TYPE_FACTS[type];
  if (typeof eventType === "number") return facts.eventNumbers[eventType] ?? "other";
  const wanted = eventType.toLowerCase();
  for (const [name, kind] of Object.entries(facts.events)) if (name.toLowerCase() === wanted) return kind;
  return "other";
}
