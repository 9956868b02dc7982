import type { Logger } from "../../core/logger.ts";
import type { RefreshWish } from "../../core/scan.ts";
import type { ItemRefresher, RefreshOutcome } from "../../core/target.ts";
import type { PlexClient } from "./client.ts";
import { plexItemType } from "./library-lookup.ts";
import type { SectionResolver } from "./sections.ts";

/**
 * Refresh in place on Plex: the item whose part is the file, found through the same listing the landed check reads
 * (`/library/sections/{id}/all?type=&file=`, an item counting only when a `Part.file` equals the file exactly), then
 * `PUT /library/metadata/{ratingKey}/refresh` (its metadata, local subtitles and artwork), and for a file replaced in
 * place `PUT …/analyze` too (its streams: a refresh does not re-read them). One call of each per item, never a
 * section: a section refresh with `force` re-downloads the whole library (refresh-fastpath-targets.md §4).
 *
 * Run by the landed check once the look saw the files, so Plex's scan has ended (its look waits for the section's
 * activity): a refresh sent earlier, while Plex scans in the background, finds the old item or none.
 */
export interface PlexItemRefresherOptions {
  readonly client: Pick<PlexClient, "itemsInSection" | "refreshItem" | "analyzeItem">;
  readonly sections: Pick<SectionResolver, "resolve">;
  readonly log: Logger;
}

export function createPlexItemRefresher(options: PlexItemRefresherOptions): ItemRefresher {
  const { client, sections } = options;
  const log = options.log.child({ component: "PLEX" });

  /** The ratingKey of the item holding `file`, in the most specific section that lists it. */
  async function itemOf(file: string, signal: AbortSignal): Promise<string | undefined> {
    for (const section of await sections.resolve(file, signal)) {
      const type = plexItemType(section.type);
      if (type === undefined) continue;
      const items = await client.itemsInSection(section.id, type, file, signal);
      const found = items.find((item) => item.ratingKey !== undefined && item.files.includes(file));
      if (found?.ratingKey !== undefined) return found.ratingKey;
    }
    return undefined;
  }

  return {
    async refresh(files: readonly string[], wish: RefreshWish, signal: AbortSignal): Promise<RefreshOutcome> {
      const keys = new Set<string>();
      const missing: string[] = [];
      for (const file of files) {
        const key = await itemOf(file, signal);
        if (key === undefined) missing.push(file);
        else keys.add(key);
      }
      for (const key of keys) {
        await client.refreshItem(key, signal);
        if (wish === "file") await client.analyzeItem(key, signal);
        log.debug({ ratingKey: key, wish }, `Refresh sent for item ${key}${wish === "file" ? " (with analysis)" : ""}`);
      }
      const what = wish === "file" ? "metadata refreshed and streams analyzed" : "metadata refreshed";
      const items = [...keys];
      const detail = `${what} (item${items.length === 1 ? "" : "s"} ${items.join(", ")})${missing.length > 0 ? `; no item for ${missing.map((f) => `'${f}'`).join(", ")}` : ""}`;
      return { refreshed: keys.size, missing, detail };
    },
  };
}
