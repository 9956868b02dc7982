import type { FakeApp } from "./app-facts.ts";
import type { RecordStore, Row } from "./record-store.ts";

/**
 * A row as the API answers it (§4): camelCase `eventType` name, `data` a string → string dictionary with camelCased
 * keys and nulls omitted, `downloadId` only when set, the app's quality/language fields, dates in whole seconds
 * (v4-era) or with up to 7 fraction digits (Sonarr v3), and the series/movie/artist/author when the include flag asks.
 */
export function recordJson(app: FakeApp, store: RecordStore, row: Row, include: boolean): string {
  const { type, facts, v3 } = app;
  const data: Record<string, string> = {};
  for (const [key, value] of Object.entries(row.data)) if (value !== undefined && value !== null) data[key.charAt(0).toLowerCase() + key.slice(1)] = value;
  const quality = { quality: { id: 7, name: "Bluray-1080p", source: "bluray", resolution: 1080 }, revision: { version: 1, real: 0, isRepack: false } };
  const out: Record<string, unknown> = {};
  if (facts.subIdField) out[facts.subIdField] = row.subId;
  if (type === "lidarr") out.albumId = row.itemId * 100;
  out[facts.itemIdField] = row.itemId;
  out.sourceTitle = row.sourceTitle;
  if (v3) {
    out.language = { id: 1, name: "English" };
    out.quality = quality;
    out.qualityCutoffNotMet = false;
    out.languageCutoffNotMet = false;
  } else {
    if (type === "sonarr" || type === "radarr") out.languages = [{ id: 1, name: "English" }];
    out.quality = quality;
    out.customFormats = [];
    out.customFormatScore = 0;
    out.qualityCutoffNotMet = false;
  }
  out.date = formatDate(v3, row);
  if (row.downloadId !== undefined) out.downloadId = row.downloadId;
  out.eventType = facts.events[row.eventType] ?? "unknown";
  out.data = data;
  if (include) {
    const item = store.itemById(row.itemId);
    if (item) out[facts.itemKey] = { id: item.id, title: item.title, sortTitle: item.title.toLowerCase(), path: item.folder };
  }
  out.id = row.id;
  return JSON.stringify(out);
}

function formatDate(v3: boolean, row: Row): string {
  const iso = new Date(row.ms).toISOString();
  // v4-era: `yyyy-MM-ddTHH:mm:ssZ` (STJUtcConverter). v3 (Newtonsoft): up to 7 fraction digits, zeros trimmed.
  if (!v3) return `${iso.slice(0, 19)}Z`;
  const fraction = `${iso.slice(20, 23)}${String(row.ticks).padStart(4, "0")}`.replace(/0+$/, "");
  return fraction ? `${iso.slice(0, 19)}.${fraction}Z` : `${iso.slice(0, 19)}Z`;
}
