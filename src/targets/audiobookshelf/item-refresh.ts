import type { RefreshWish } from "../../core/scan.ts";
import type { ItemRefresher, RefreshOutcome } from "../../core/target.ts";
import type { AudiobookshelfClient } from "./client.ts";
import { startItemWalk } from "./item-walk.ts";
import type { AbsItem } from "./wire-schemas.ts";

/**
 * Refresh in place on Audiobookshelf: the book (or podcast) folder holding each file is rescanned on its own,
 * `POST /api/items/{id}/scan` (refresh-fastpath-targets.md §5), which re-reads its files' tags, chapters and duration
 * whatever was asked (`metadata` or `file`: Audiobookshelf has one call for both). Never the library. A book lying
 * loose in the library folder (a single-file item) cannot be rescanned alone (Audiobookshelf answers 500): it is said,
 * not sent. Each item once, however many of the files it holds.
 */
export function createAbsItemRefresher(options: { readonly client: AudiobookshelfClient; readonly label: string }): ItemRefresher {
  const { client, label } = options;
  return {
    async refresh(files: readonly string[], _wish: RefreshWish, signal: AbortSignal): Promise<RefreshOutcome> {
      const walk = startItemWalk({ client, libraries: await client.libraries(signal), signal, label });
      const items = new Map<string, AbsItem>();
      const missing: string[] = [];
      const loose: string[] = [];
      for (const file of files) {
        const item = await walk.owner(file);
        if (!item || item.isMissing) missing.push(file);
        else if (item.isFile) loose.push(file);
        else items.set(item.id, item);
      }
      const results: string[] = [];
      for (const item of items.values()) results.push(`${item.id} ${(await client.scanItem(item.id, signal)).toLowerCase()}`);
      const parts = [
        ...(results.length ? [`rescanned ${results.length === 1 ? "item" : "items"} ${results.join(", ")}`] : []),
        ...(loose.length ? [`${loose.length} single-file book(s) not rescanned (Audiobookshelf rescans folder items only)`] : []),
      ];
      return { refreshed: results.length, missing, detail: parts.join("; ") || "nothing to rescan" };
    },
  };
}
