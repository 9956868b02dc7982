import type { FakeArrOptions, FakeArrType } from "./types.ts";

/**
 * What differs between the four apps (../shared/reference/arr-history.md): name, API root (§1), default version and
 * root folder, the event numbers and names (§3), the record's id fields and include flag (§4), whether imports are
 * written per episode or track; and `FakeApp`, one fake's facts resolved from its options (Sonarr v3 or v4, version,
 * root folder).
 */
export interface AppFacts {
  readonly appName: string;
  readonly apiRoot: string;
  readonly defaultVersion: string;
  readonly defaultRoot: string;
  /** number → camelCase name (§3). */
  readonly events: Readonly<Record<number, string>>;
  readonly importEvent: number;
  readonly renameEvent: number;
  readonly deleteEvent: number;
  /** The record's id fields (§4) and the include flag that embeds the item. */
  readonly itemKey: "series" | "movie" | "artist" | "author";
  readonly itemIdField: string;
  readonly subIdField: string | undefined;
  readonly perItemImports: boolean;
}

const FACTS: Readonly<Record<FakeArrType, AppFacts>> = {
  sonarr: {
    appName: "Sonarr",
    apiRoot: "/api/v3",
    defaultVersion: "4.0.14.2939",
    defaultRoot: "/tv",
    events: {
      0: "unknown",
      1: "grabbed",
      2: "seriesFolderImported",
      3: "downloadFolderImported",
      4: "downloadFailed",
      5: "episodeFileDeleted",
      6: "episodeFileRenamed",
      7: "downloadIgnored",
    },
    importEvent: 3,
    renameEvent: 6,
    deleteEvent: 5,
    itemKey: "series",
    itemIdField: "seriesId",
    subIdField: "episodeId",
    perItemImports: true,
  },
  radarr: {
    appName: "Radarr",
    apiRoot: "/api/v3",
    defaultVersion: "6.0.4.10291",
    defaultRoot: "/movies",
    events: {
      0: "unknown",
      1: "grabbed",
      3: "downloadFolderImported",
      4: "downloadFailed",
      6: "movieFileDeleted",
      7: "movieFolderImported",
      8: "movieFileRenamed",
      9: "downloadIgnored",
    },
    importEvent: 3,
    renameEvent: 8,
    deleteEvent: 6,
    itemKey: "movie",
    itemIdField: "movieId",
    subIdField: undefined,
    perItemImports: false,
  },
  lidarr: {
    appName: "Lidarr",
    apiRoot: "/api/v1",
    defaultVersion: "2.14.5.4836",
    defaultRoot: "/music",
    events: {
      0: "unknown",
      1: "grabbed",
      2: "artistFolderImported",
      3: "trackFileImported",
      4: "downloadFailed",
      5: "trackFileDeleted",
      6: "trackFileRenamed",
      7: "albumImportIncomplete",
      8: "downloadImported",
      9: "trackFileRetagged",
      10: "downloadIgnored",
    },
    importEvent: 3,
    renameEvent: 6,
    deleteEvent: 5,
    itemKey: "artist",
    itemIdField: "artistId",
    subIdField: "trackId",
    perItemImports: true,
  },
  readarr: {
    appName: "Readarr",
    apiRoot: "/api/v1",
    defaultVersion: "0.3.22.2499",
    defaultRoot: "/books",
    events: {
      0: "unknown",
      1: "grabbed",
      3: "bookFileImported",
      4: "downloadFailed",
      5: "bookFileDeleted",
      6: "bookFileRenamed",
      7: "bookImportIncomplete",
      8: "downloadImported",
      9: "bookFileRetagged",
      10: "downloadIgnored",
    },
    importEvent: 3,
    renameEvent: 6,
    deleteEvent: 5,
    itemKey: "author",
    itemIdField: "authorId",
    subIdField: "bookId",
    perItemImports: false,
  },
};

const SONARR_V3_VERSION = "3.0.10.1567";

export interface FakeApp {
  readonly type: FakeArrType;
  readonly facts: AppFacts;
  /** Sonarr v3 (Nancy): its own key order, dates, paging, sort and errors. */
  readonly v3: boolean;
  readonly version: string;
  /** The root folder, without a trailing slash. */
  readonly root: string;
}

export function resolveApp(options: FakeArrOptions): FakeApp {
  const facts = FACTS[options.type];
  const v3 = options.type === "sonarr" && options.sonarrVersion === "v3";
  const version = options.version ?? (v3 ? SONARR_V3_VERSION : facts.defaultVersion);
  const root = (options.pathRoot ?? facts.defaultRoot).replace(/\/+$/, "");
  return { type: options.type, facts, v3, version, root };
}
