import * as v from "valibot";

/**
 * Shapes of the Plex JSON answers we read (integrations.md §3.1), validated before use. Lenient where Plex is
 * inconsistent: ids arrive as strings or numbers, and empty containers omit their arrays.
 */

export interface PlexServerInfo {
  readonly version: string;
  readonly friendlyName: string;
  readonly machineIdentifier: string;
}

export interface PlexSection {
  /** `Directory[].key`: a string on the wire (`"1"`), kept a string. */
  readonly id: string;
  readonly title: string;
  /** `movie`, `show`, `artist`, `photo`. */
  readonly type: string;
  /** `Location[].path`: a section can have several roots. */
  readonly locations: readonly string[];
  /** Plex is scanning this section right now. */
  readonly refreshing: boolean;
}

export interface PlexActivity {
  readonly type: string;
  readonly title: string;
  /** `Context.librarySectionID` as a string; absent for about a second after a scan starts. */
  readonly sectionId?: string;
}

const Id = v.pipe(
  v.union([v.string(), v.number()]),
  v.transform((value) => String(value)),
);

export const ServerInfoSchema = v.object({
  MediaContainer: v.object({
    version: v.string(),
    friendlyName: v.optional(v.string()),
    machineIdentifier: v.optional(v.string()),
  }),
});

const DirectorySchema = v.object({
  key: Id,
  title: v.optional(v.string(), ""),
  type: v.optional(v.string(), ""),
  refreshing: v.optional(v.union([v.boolean(), v.number()]), false),
  Location: v.optional(v.array(v.object({ path: v.string() })), []),
});

export const SectionsSchema = v.object({
  MediaContainer: v.object({ Directory: v.optional(v.array(DirectorySchema)) }),
});

const ActivitySchema = v.object({
  type: v.optional(v.string(), ""),
  title: v.optional(v.string(), ""),
  Context: v.optional(v.object({ librarySectionID: v.optional(Id) })),
});

export const ActivitiesSchema = v.object({
  MediaContainer: v.object({ Activity: v.optional(v.array(ActivitySchema)) }),
});

/** `/library/sections/{id}/all`: only the file paths are read; an item without media or parts holds no file. */
const PartSchema = v.object({ file: v.optional(v.string()) });
const MediaSchema = v.object({ Part: v.optional(v.array(PartSchema), []) });
const MetadataSchema = v.object({ ratingKey: v.optional(v.union([v.string(), v.number()])), Media: v.optional(v.array(MediaSchema), []) });

export const LibraryItemsSchema = v.object({
  // `totalSize`: the whole listing's count, when it was asked a page at a time (X-Plex-Container-Start/-Size).
  MediaContainer: v.object({ Metadata: v.optional(v.array(MetadataSchema), []), totalSize: v.optional(v.number()) }),
});

/** Every `Metadata[].Media[].Part[].file`, flattened (a multi-part movie gives several). */
export function partFiles(items: v.InferOutput<typeof LibraryItemsSchema>): string[] {
  return fileItems(items).flatMap((item) => item.files);
}

/** One library item as a listing answers it: its `ratingKey` (absent on an odd answer) and the files of its parts. */
export interface PlexFileItem {
  readonly ratingKey?: string;
  readonly files: readonly string[];
}

export function fileItems(items: v.InferOutput<typeof LibraryItemsSchema>): PlexFileItem[] {
  return items.MediaContainer.Metadata.map((item) => ({
    ...(item.ratingKey === undefined ? {} : { ratingKey: String(item.ratingKey) }),
    files: item.Media.flatMap((media) => media.Part.flatMap((part) => (part.file === undefined ? [] : [part.file]))),
  }));
}

export function toSection(directory: v.InferOutput<typeof DirectorySchema>): PlexSection {
  return {
    id: directory.key,
    title: directory.title,
    type: directory.type,
    locations: directory.Location.map((location) => location.path),
    refreshing: Boolean(directory.refreshing),
  };
}

export function toActivity(activity: v.InferOutput<typeof ActivitySchema>): PlexActivity {
  const sectionId = activity.Context?.librarySectionID;
  return { type: activity.type, title: activity.title, ...(sectionId !== undefined ? { sectionId } : {}) };
}
