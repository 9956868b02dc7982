import { timedCall, type TargetCallMetrics } from "../../core/metrics.ts";
import type { PlexClient } from "./client.ts";

/**
 * The Plex client with each call timed (`SERVER_METRICS`): target `plex`, the operation named after the call
 * (`refresh_section`, `activities` …). Without metrics the client is returned as it is.
 */
export function timedPlexClient(client: PlexClient, metrics: TargetCallMetrics | undefined): PlexClient {
  if (!metrics) return client;
  const timed = <T>(operation: string, call: () => Promise<T>): Promise<T> => timedCall(metrics, "plex", operation, call);
  return {
    url: client.url,
    serverInfo: (signal) => timed("server_info", () => client.serverInfo(signal)),
    listSections: (signal) => timed("list_sections", () => client.listSections(signal)),
    activities: (signal) => timed("activities", () => client.activities(signal)),
    refreshSection: (sectionId, folder, signal) => timed("refresh_section", () => client.refreshSection(sectionId, folder, signal)),
    filesInSection: (sectionId, type, file, signal) =>
      timed("files_in_section", () => client.filesInSection(sectionId, type, file, signal)),
    emptyTrash: (sectionId, signal) => timed("empty_trash", () => client.emptyTrash(sectionId, signal)),
    itemsInSection: (sectionId, type, file, signal) =>
      timed("items_in_section", () => client.itemsInSection(sectionId, type, file, signal)),
    analyzeItem: (ratingKey, signal) => timed("analyze_item", () => client.analyzeItem(ratingKey, signal)),
    refreshItem: (ratingKey, signal) => timed("refresh_item", () => client.refreshItem(ratingKey, signal)),
  };
}
