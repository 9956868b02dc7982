import type { FeatureId } from "./features.ts";

/** The features this build wires; keys of the others log "not available in this build" once at start. */
export const BUILT_FEATURES: ReadonlySet<FeatureId> = new Set<FeatureId>([
  "plex",
  "scanner",
  "analyze",
  "emptyTrash",
  "drive",
  "rcRefresh",
]);
