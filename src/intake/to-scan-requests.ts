import type { ScanRequest } from "../core/scan.ts";
import type { PathMapper } from "../paths/mapping.ts";
import type { ReceivedPath } from "./arr-app.ts";

/**
 * Received paths → `ScanRequest`s in the media server's form (`SERVER_PATH_MAPPINGS`); the sender's spelling is kept
 * as `receivedPath` for the log and the manual page.
 */
export function toScanRequests(
  paths: readonly ReceivedPath[],
  options: { readonly mapper: PathMapper; readonly source: string; readonly event: string },
): ScanRequest[] {
  return paths.map((entry) => {
    const request: ScanRequest = {
      path: options.mapper.toServer(entry.path).path,
      kind: entry.kind,
      source: options.source,
      event: options.event,
      receivedPath: entry.path,
    };
    return entry.deleted ? { ...request, deleted: true } : request;
  });
}

/** `Sonarr`, or `Sonarr (4k)` when the sender posted to `/<SERVER_PASS>/4k`. */
export function sourceName(app: string, label: string | undefined): string {
  return label ? `${app} (${label})` : app;
}
