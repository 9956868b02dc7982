import type { QueueItemView } from "../core/queue-view.ts";
import type { ScanRequest, ScanSink } from "../core/scan.ts";

/**
 * "Refresh" on a History item (the console's button, the API's `cmd=refresh&id=`): the files its requests named are
 * asked again, as a scan followed by a refresh in place of each file's item (`RefreshWish` `file`: metadata and
 * streams) on every target, once the server shows them. It goes through the sink like any request, so it is durable
 * before the answer and merges with a folder already waiting. A folder whose requests named no file has no item to
 * re-read: nothing is queued and the answer says so.
 */
export type RefreshAsked =
  | { readonly kind: "queued"; readonly files: number }
  | { readonly kind: "no-files" }
  | { readonly kind: "missing" };

export async function refreshItem(
  item: QueueItemView | undefined,
  sink: ScanSink,
  source: string,
  origin?: string,
): Promise<RefreshAsked> {
  if (!item) return { kind: "missing" };
  const requests = refreshRequests(item, source);
  if (requests.length === 0) return { kind: "no-files" };
  await sink(requests, origin ? { origin } : undefined);
  return { kind: "queued", files: requests.length };
}

/** The item's named files still there (not deleted), each once, as refresh-asking requests. */
export function refreshRequests(item: QueueItemView, source: string): ScanRequest[] {
  const folder = (item.scanFolder ?? item.folder).normalize("NFC");
  const deleted = new Map<string, boolean>();
  for (const request of item.requests) {
    if (request.kind === "folder" || request.path.normalize("NFC") === folder) continue;
    deleted.set(request.path, (deleted.get(request.path) ?? true) && request.deleted);
  }
  return [...deleted]
    .filter(([, gone]) => !gone)
    .map(([path]) => ({ path, kind: "file", source, event: "Refresh", refresh: "file" }));
}

/** The words for a refresh that could not be queued, for the console and the API alike. */
export const NO_FILES_TO_REFRESH = "its requests named no file: a refresh re-reads the item of a file (scan the folder instead)";
