import * as v from "valibot";
import { eventKind, type ArrType, type HistoryEventKind } from "./arr-type.ts";

/**
 * The *arr apps' JSON, checked with valibot (../shared/reference/arr-history.md §2, §4). Lenient where the apps
 * differ or may add fields (unknown fields are ignored, nulls are omitted or null, `data` keys are camelCased on
 * output but read case-insensitively, values are strings); strict only on what the backfill cannot do without:
 * a record's `id`, `date` and `eventType`, and the page's `totalRecords` and `records`.
 */

/** One *arr history record, reduced to what the backfill uses (../shared/reference/arr-history.md §4). */
export interface HistoryRecord {
  /** The history row's id: grows with insertion, unique per app instance. */
  readonly id: number;
  /** When the app wrote the record, in ms since the epoch (whole seconds on v4-era apps). */
  readonly date: number;
  readonly eventType: HistoryEventKind;
  /** `eventType` exactly as the app sent it (`downloadFolderImported`), for logs. */
  readonly appEventType: string;
  /** Import: `data.importedPath`, the file in the library. */
  readonly importedPath?: string;
  /** Rename: `data.sourcePath`, where the file was. */
  readonly previousPath?: string;
  /** Rename: `data.path`, where the file is now. */
  readonly path?: string;
  /** File delete: `sourceTitle`, the deleted file's path. */
  readonly deletedPath?: string;
  /** File delete: `data.reason` (`Upgrade`, `Manual`, `MissingFromDisk` …). */
  readonly reason?: string;
  /** `data.fileId`: the webhook's `episodeFile.id`, `movieFile.id` …, to match a webhook already received. */
  readonly fileId?: string;
  /** The download client's id (imports and grabs). */
  readonly downloadId?: string;
  /** `seriesId`, `movieId`, `artistId` or `authorId`: where to look up the item's current folder. */
  readonly itemId?: number;
}

// Whole seconds (`…T09:37:52Z`, v4-era) or fractional (`…T09:37:52.1234567Z`, Sonarr v3); both are UTC.
const ISO_DATE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})?$/;

const wireDate = v.pipe(
  v.string("must be a date string"),
  v.regex(ISO_DATE, "must be an ISO date"),
  v.transform((text) => Date.parse(/(Z|[+-]\d{2}:?\d{2})$/.test(text) ? text : `${text}Z`)),
  v.check((ms) => Number.isFinite(ms), "must be a valid date"),
);

const wireRecord = v.looseObject({
  id: v.pipe(v.number("must be a number"), v.integer("must be a whole number")),
  date: wireDate,
  eventType: v.union([v.string(), v.number()], "must be an event name"),
  sourceTitle: v.optional(v.unknown()),
  downloadId: v.optional(v.unknown()),
  data: v.optional(v.unknown()),
  seriesId: v.optional(v.unknown()),
  movieId: v.optional(v.unknown()),
  artistId: v.optional(v.unknown()),
  authorId: v.optional(v.unknown()),
});
type WireRecord = v.InferOutput<typeof wireRecord>;

export const historyPageSchema = v.looseObject({
  totalRecords: v.pipe(v.number("must be a number"), v.integer("must be a whole number")),
  records: v.array(wireRecord, "must be a list"),
});

export const systemStatusSchema = v.looseObject({
  appName: v.string("must be a string"),
  version: v.string("must be a string"),
});

/** A checked wire record → its HistoryRecord. */
export function toHistoryRecord(wire: WireRecord, type: ArrType): HistoryRecord {
  const data = readData(wire.data);
  const eventType = eventKind(type, wire.eventType);
  const itemId = firstNumber(wire.seriesId, wire.movieId, wire.artistId, wire.authorId);
  const fields: Record<string, string | number | undefined> = {
    fileId: data.get("fileid"),
    downloadId: text(wire.downloadId),
    itemId,
  };
  switch (eventType) {
    case "import":
      fields.importedPath = data.get("importedpath");
      break;
    case "rename":
      fields.previousPath = data.get("sourcepath") ?? text(wire.sourceTitle);
      fields.path = data.get("path");
      break;
    case "delete":
      fields.deletedPath = text(wire.sourceTitle);
      fields.reason = data.get("reason");
      break;
    case "other":
      break;
  }
  const record: Record<string, unknown> = { id: wire.id, date: wire.date, eventType, appEventType: String(wire.eventType) };
  for (const [key, value] of Object.entries(fields)) if (value !== undefined) record[key] = value;
  return record as unknown as HistoryRecord;
}

/** `data` is a string → string dictionary; keys compared in lower case, values kept when they are text. */
function readData(value: unknown): Map<string, string> {
  const out = new Map<string, string>();
  if (typeof value !== "object" || value === null || Array.isArray(value)) return out;
  for (const [key, entry] of Object.entries(value as Record<string, unknown>)) {
    const found = text(entry);
    if (found !== undefined) out.set(key.toLowerCase(), found);
  }
  return out;
}

function text(value: unknown): string | undefined {
  if (typeof value === "string") return value === "" ? undefined : value;
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  return undefined;
}

function firstNumber(...values: unknown[]): number | undefined {
  return values.find((value): value is number => typeof value === "number" && Number.isInteger(value) && value > 0);
}
