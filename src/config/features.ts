import type { Config } from "./schema.ts";

/**
 * Keys that are accepted but whose feature this build does not carry out: one warning each at start, never silent.
 * The server command passes the set of features it wired; a key's warning disappears when its feature lands.
 */
export type FeatureId = "drive" | "scanner" | "analyze" | "emptyTrash" | "rcRefresh" | "crypt" | "fixMismatched" | "plex";

interface FeatureKey {
  readonly feature: FeatureId;
  readonly key: string;
  readonly isSet: (config: Config) => boolean;
  readonly message: string;
}

const FEATURE_KEYS: readonly FeatureKey[] = [
  { feature: "drive", key: "CLOUD.ENABLED", isSet: (c) => c.CLOUD.ENABLED, message: "Google Drive monitoring is not available in this build" },
  { feature: "scanner", key: "PLEX_SCAN_METHOD", isSet: (c) => c.PLEX_SCAN_METHOD === "scanner", message: "scanning through the Plex Media Scanner is not available in this build" },
  { feature: "plex", key: "PLEX_TOKEN", isSet: (c) => c.PLEX_TOKEN !== "", message: "the Plex target is not available in this build; scans are queued but not sent" },
  { feature: "analyze", key: "PLEX_ANALYZE_TYPE", isSet: (c) => c.PLEX_ANALYZE_TYPE !== "off", message: "analysis after a scan is not available in this build" },
  { feature: "emptyTrash", key: "PLEX_EMPTY_TRASH", isSet: (c) => c.PLEX_EMPTY_TRASH, message: "emptying the trash after a scan is not available in this build" },
  { feature: "rcRefresh", key: "RCLONE.RC_CACHE_REFRESH.ENABLED", isSet: (c) => c.RCLONE.RC_CACHE_REFRESH.ENABLED, message: "the rclone remote-control refresh is not available in this build" },
  { feature: "crypt", key: "RCLONE.CRYPT_MAPPINGS", isSet: (c) => Object.keys(c.RCLONE.CRYPT_MAPPINGS).length > 0, message: "rclone crypt name decoding is not supported; use an unencrypted view of the drive in SERVER_PATH_MAPPINGS" },
  { feature: "fixMismatched", key: "PLEX_FIX_MISMATCHED", isSet: (c) => c.PLEX_FIX_MISMATCHED, message: "fixing mismatched items is not supported (Plex's agents changed since plex_autoscan; use Plex's own Fix Match)" },
];

export function unbuiltFeatureWarnings(config: Config, built: ReadonlySet<FeatureId>): string[] {
  const out = FEATURE_KEYS.filter((entry) => entry.isSet(config) && !built.has(entry.feature)).map(
    (entry) => `Config key "${entry.key}" is set, but ${entry.message}. It is ignored.`,
  );
  return out;
}

/** Keys that are read but have no effect any more, said once at start (info, not a problem to fix). */
export function ignoredKeyNotes(config: Config, explicitKeys: ReadonlySet<string>): string[] {
  const notes: string[] = [];
  if (explicitKeys.has("SERVER_USE_SQLITE") && !config.SERVER_USE_SQLITE) {
    notes.push("SERVER_USE_SQLITE is false: ignored, the scan queue is always durable now.");
  }
  return notes;
}
