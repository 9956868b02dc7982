import type { FakeApp } from "./app-facts.ts";
import type { Item, RecordStore } from "./record-store.ts";
import type { FakeDate, FakeDelete, FakeGrab, FakeImport, FakeOther, FakeRecordInput, FakeRename } from "./types.ts";

/**
 * The records `add…` writes, each as the app writes it (§4): the event's number, the `Data` dictionary each app
 * and version keeps for an import, rename, delete, grab or other event, the file, download and episode/track ids,
 * and the date (a given one to the millisecond, a default one "now", strictly later than the last default).
 */
export interface RecordBuilders {
  addImport(input: FakeImport): number[];
  addRename(input: FakeRename): number;
  addDelete(input: FakeDelete): number;
  addGrab(input?: FakeGrab): number;
  addOther(input: FakeOther): number;
  /** One record of any kind (an import: its last id). */
  add(input: FakeRecordInput): number;
}

export function recordBuilders(app: FakeApp, store: RecordStore): RecordBuilders {
  const { type, facts, v3, root } = app;
  let nextFileId = 1;
  let nextSubId = 1;
  let lastDefault = { ms: 0, ticks: 0 };

  /** A given date is kept to the millisecond; a default one is "now", strictly later than the last default. */
  function when(date: FakeDate | undefined): { ms: number; ticks: number } {
    if (date !== undefined) {
      const ms = date instanceof Date ? date.getTime() : typeof date === "number" ? date : Date.parse(date);
      if (!Number.isFinite(ms)) throw new Error(`fake-arr: bad date ${String(date)}`);
      return { ms, ticks: 0 };
    }
    const now = Date.now();
    const next =
      now > lastDefault.ms
        ? { ms: now, ticks: 0 }
        : lastDefault.ticks < 9999
          ? { ms: lastDefault.ms, ticks: lastDefault.ticks + 1 }
          : { ms: lastDefault.ms + 1, ticks: 0 };
    lastDefault = next;
    return next;
  }

  function addImport(input: FakeImport): number[] {
    const path = store.absolute(input.path);
    const item = store.itemOf(path);
    const count = input.items ?? 1;
    if (count > 1 && !facts.perItemImports) throw new Error(`fake-arr: ${facts.appName} writes one import record per file`);
    const fileId = String(input.fileId ?? nextFileId++);
    const at = when(input.date);
    const downloadId = input.downloadId ?? `SABnzbd_nzo_${fileId}`;
    const fileName = path.slice(path.lastIndexOf("/") + 1);
    const data: Record<string, string | undefined> = {
      FileId: fileId,
      DroppedPath: input.droppedPath ?? `/downloads/complete/${fileName}`,
      ImportedPath: path,
      DownloadClient: "SABnzbd",
      DownloadClientName: type === "lidarr" ? undefined : "SABnzbd",
      ReleaseGroup: "GROUP",
    };
    if (v3) data.PreferredWordScore = "0";
    else {
      data.Size = "1234567890";
      data.IndexerFlags = "0";
      if (type === "sonarr" || type === "radarr") data.CustomFormatScore = "0";
      if (type === "sonarr") data.ReleaseType = "singleEpisode";
    }
    const ids: number[] = [];
    for (let index = 0; index < count; index += 1) {
      ids.push(
        store.push({
          ...at,
          eventType: facts.importEvent,
          itemId: item.id,
          subId: nextSubId++,
          sourceTitle: fileName.replace(/\.[^.]+$/, ""),
          downloadId,
          data,
        }),
      );
    }
    return ids;
  }

  function addRename(input: FakeRename): number {
    const from = store.absolute(input.from);
    const to = store.absolute(input.to);
    const item = store.itemOf(to);
    const data: Record<string, string | undefined> = { SourcePath: from, Path: to };
    if (type === "sonarr" || type === "radarr") {
      data.SourceRelativePath = relativeTo(item, from);
      data.RelativePath = relativeTo(item, to);
    }
    data.ReleaseGroup = "GROUP";
    if (!v3) {
      data.Size = "1234567890";
      data.IndexerFlags = "0";
    }
    return store.push({ ...when(input.date), eventType: facts.renameEvent, itemId: item.id, subId: nextSubId++, sourceTitle: from, downloadId: undefined, data });
  }

  function addDelete(input: FakeDelete): number {
    const path = store.absolute(input.path);
    const item = store.itemOf(path);
    const data = { Reason: input.reason ?? "Manual", ReleaseGroup: "GROUP", Size: v3 ? undefined : "1234567890" };
    return store.push({ ...when(input.date), eventType: facts.deleteEvent, itemId: item.id, subId: nextSubId++, sourceTitle: path, downloadId: undefined, data });
  }

  function addGrab(input: FakeGrab = {}): number {
    const item = store.itemOf(`${root}/Grabbed`);
    const downloadId = input.downloadId ?? `SABnzbd_nzo_grab${store.rows.length + 1}`;
    const data = {
      Indexer: "NZBgeek",
      NzbInfoUrl: "https://nzbgeek.example/details/1",
      ReleaseGroup: "GROUP",
      Age: "0",
      PublishedDate: new Date(0).toISOString(),
      DownloadClient: "SABnzbd",
      DownloadUrl: "https://nzbgeek.example/get/1",
      Guid: `guid-${store.rows.length + 1}`,
      Protocol: "1",
    };
    const title = input.title ?? "Some.Release.1080p.WEB-DL-GROUP";
    return store.push({ ...when(input.date), eventType: 1, itemId: item.id, subId: nextSubId++, sourceTitle: title, downloadId, data });
  }

  function addOther(input: FakeOther): number {
    const entry = Object.entries(facts.events).find(([, name]) => name === input.eventType);
    if (!entry) throw new Error(`fake-arr: ${facts.appName} has no event '${input.eventType}'`);
    const item = store.itemOf(`${root}/Other`);
    const data = Object.fromEntries(Object.entries(input.data ?? {}).map(([key, value]) => [key.charAt(0).toUpperCase() + key.slice(1), value]));
    return store.push({
      ...when(input.date),
      eventType: Number(entry[0]),
      itemId: item.id,
      subId: nextSubId++,
      sourceTitle: input.sourceTitle ?? "Some.Release.1080p.WEB-DL-GROUP",
      downloadId: input.downloadId,
      data,
    });
  }

  function add(input: FakeRecordInput): number {
    switch (input.kind) {
      case "import":
        return addImport(input).at(-1) ?? 0;
      case "rename":
        return addRename(input);
      case "delete":
        return addDelete(input);
      case "grab":
        return addGrab(input);
      case "other":
        return addOther(input);
    }
  }

  return { addImport, addRename, addDelete, addGrab, addOther, add };
}

function relativeTo(item: Item, path: string): string | undefined {
  return path.startsWith(`${item.folder}/`) ? path.slice(item.folder.length + 1) : undefined;
}
