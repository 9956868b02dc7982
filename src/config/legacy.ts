/**
 * plex_autoscan's renamed and removed keys (see its changelog): recognised, migrated where the meaning is the same,
 * and named in a warning with the key that replaced them. Also reads the `GOOGLE` section as `CLOUD`, and by275's
 * `GOOGLE.DRIVES`.
 */
type Raw = Record<string, unknown>;

export interface LegacyResult {
  readonly raw: Raw;
  readonly warnings: string[];
  readonly notes: string[];
  /** Renames applied, `old → new`, for `config upgrade` to rewrite. */
  readonly renamed: string[];
  /** Keys dropped as obsolete, for `config upgrade` to report. */
  readonly removed: string[];
  /** New section name → the name in the user's file (`CLOUD` → `GOOGLE`), for problem messages. */
  readonly aliases: Map<string, string>;
}

const REMOVED: Readonly<Record<string, string>> = {
  USE_QUOTED_SCAN_DIRECTORY: "paths always reach the scanner intact now; remove the key",
  PLEX_SECTION_PATH_MAPPINGS: "sections come from Plex itself now (`autoscan sections`); remove the key",
  PLEX_SECTION_PATH_MAPPINGS_WITH_API: "sections come from Plex's API always now; remove the key",
  USE_SMI2SRT: "subtitle conversion is not part of autoscan; remove the key",
  PLEX_ASSET_EXTENSIONS: "not supported (by275 fork key); remove the key",
  PLEX_EXTRA_DIRS: "not supported (by275 fork key); remove the key",
};

const isObject = (value: unknown): value is Raw => typeof value === "object" && value !== null && !Array.isArray(value);

export function migrateLegacyKeys(input: Raw): LegacyResult {
  const raw: Raw = structuredClone(input);
  const out: LegacyResult = { raw, warnings: [], notes: [], renamed: [], removed: [], aliases: new Map() };
  moveSection(out, "GOOGLE", "CLOUD", false);
  moveSection(out, "GDRIVE", "CLOUD", true);
  renameTop(out, "DOCKER_FILE_EXIST_PATH_MAPPINGS", "SERVER_FILE_EXIST_PATH_MAPPINGS");
  renameTop(out, "PLEX_ANALYZE_FILE_TYPE", "PLEX_ANALYZE_TYPE");
  migrateRcCacheExpire(out);
  if (isObject(raw.RCLONE) && "CRYPT_MAPPING" in raw.RCLONE) renameIn(out, raw.RCLONE, "RCLONE.", "CRYPT_MAPPING", "CRYPT_MAPPINGS");
  if (isObject(raw.CLOUD)) migrateCloud(out, raw.CLOUD, out.aliases.get("CLOUD") ?? "CLOUD");
  migrateAnalyzeType(out);
  for (const [key, why] of Object.entries(REMOVED)) {
    if (key in raw) {
      delete raw[key];
      out.removed.push(key);
      out.warnings.push(`Config key "${key}" is obsolete and ignored: ${why}.`);
    }
  }
  return out;
}

function moveSection(out: LegacyResult, from: string, to: string, legacy: boolean): void {
  const section = out.raw[from];
  if (section === undefined) return;
  delete out.raw[from];
  if (out.raw[to] !== undefined) {
    out.warnings.push(`Config section "${from}" is ignored because "${to}" is also present; merge them into "${to}".`);
    return;
  }
  out.raw[to] = section;
  out.aliases.set(to, from);
  out.renamed.push(`${from} → ${to}`);
  if (legacy) out.warnings.push(`Config section "${from}" was replaced by "${to}"; its settings were read as "${to}".`);
  else out.notes.push(`Reading the "${from}" section as "${to}" (its name in autoscan).`);
}

function renameTop(out: LegacyResult, from: string, to: string): void {
  renameIn(out, out.raw, "", from, to);
}

function renameIn(out: LegacyResult, obj: Raw, prefix: string, from: string, to: string): void {
  if (!(from in obj)) return;
  const value = obj[from];
  delete obj[from];
  if (to in obj) {
    out.warnings.push(`Config key "${prefix}${from}" is obsolete and ignored: "${prefix}${to}" replaced it and is set.`);
    return;
  }
  obj[to] = value;
  out.renamed.push(`${prefix}${from} → ${prefix}${to}`);
  out.warnings.push(`Config key "${prefix}${from}" was renamed to "${prefix}${to}"; its value was kept.`);
}

function migrateRcCacheExpire(out: LegacyResult): void {
  const old = out.raw.RCLONE_RC_CACHE_EXPIRE;
  if (old === undefined) return;
  delete out.raw.RCLONE_RC_CACHE_EXPIRE;
  const rclone: Raw = isObject(out.raw.RCLONE) ? out.raw.RCLONE : (out.raw.RCLONE = {});
  if (rclone.RC_CACHE_REFRESH === undefined && isObject(old)) {
    const kept = ["ENABLED", "RC_URL", "FILE_EXISTS_TO_REMOTE_MAPPINGS"].filter((key) => old[key] !== undefined);
    rclone.RC_CACHE_REFRESH = Object.fromEntries(kept.map((key) => [key, old[key]]));
    out.renamed.push("RCLONE_RC_CACHE_EXPIRE → RCLONE.RC_CACHE_REFRESH");
  }
  out.warnings.push(
    'Config key "RCLONE_RC_CACHE_EXPIRE" was replaced by "RCLONE.RC_CACHE_REFRESH"; ENABLED, RC_URL and FILE_EXISTS_TO_REMOTE_MAPPINGS were kept.',
  );
}

/** Keys inside the drive section that older files (GDRIVE, by275's GOOGLE) spelt differently. */
function migrateCloud(out: LegacyResult, cloud: Raw, section: string): void {
  renameIn(out, cloud, "CLOUD.", "SHOW_CACHE_MESSAGES", "SHOW_CACHE_LOGS");
  const allowed: Raw = isObject(cloud.ALLOWED) ? cloud.ALLOWED : {};
  if ("ALLOW_PATHS" in cloud || "SCAN_EXTENSIONS" in cloud) cloud.ALLOWED = allowed;
  if ("ALLOW_PATHS" in cloud) {
    if (!("FILE_PATHS" in allowed)) allowed.FILE_PATHS = cloud.ALLOW_PATHS;
    delete cloud.ALLOW_PATHS;
    out.warnings.push(`Config key "${section}.ALLOW_PATHS" was replaced by "CLOUD.ALLOWED.FILE_PATHS"; its value was kept.`);
  }
  if ("SCAN_EXTENSIONS" in cloud) {
    if (!("FILE_EXTENSIONS_LIST" in allowed)) {
      allowed.FILE_EXTENSIONS_LIST = cloud.SCAN_EXTENSIONS;
      allowed.FILE_EXTENSIONS = true;
    }
    delete cloud.SCAN_EXTENSIONS;
    out.warnings.push(`Config key "${section}.SCAN_EXTENSIONS" was replaced by "CLOUD.ALLOWED.FILE_EXTENSIONS_LIST".`);
  }
  if ("IGNORE_PATHS" in cloud) {
    delete cloud.IGNORE_PATHS;
    out.removed.push(`${section}.IGNORE_PATHS`);
    out.warnings.push(`Config key "${section}.IGNORE_PATHS" is obsolete and ignored: list the wanted paths in CLOUD.ALLOWED.FILE_PATHS.`);
  }
  migrateDrives(out, cloud);
}

/** by275 offered `loudness` analysis; Plex's API has no such step, so basic analysis runs instead. */
function migrateAnalyzeType(out: LegacyResult): void {
  const type = out.raw.PLEX_ANALYZE_TYPE;
  if (typeof type !== "string" || type.toLowerCase() !== "loudness") return;
  out.raw.PLEX_ANALYZE_TYPE = "basic";
  out.warnings.push('PLEX_ANALYZE_TYPE "loudness" (by275) is not supported: basic analysis runs instead.');
}

/** by275: `DRIVES: {MY_DRIVE, SHARED_DRIVES, SHARED_DRIVES_LIST}` → `TEAMDRIVE` + `TEAMDRIVES`. */
function migrateDrives(out: LegacyResult, cloud: Raw): void {
  const drives = cloud.DRIVES;
  if (drives === undefined) return;
  delete cloud.DRIVES;
  if (isObject(drives)) {
    if (drives.SHARED_DRIVES !== undefined && !("TEAMDRIVE" in cloud)) cloud.TEAMDRIVE = drives.SHARED_DRIVES;
    if (drives.SHARED_DRIVES_LIST !== undefined && !("TEAMDRIVES" in cloud)) cloud.TEAMDRIVES = drives.SHARED_DRIVES_LIST;
    if (drives.MY_DRIVE === false) {
      out.warnings.push('CLOUD.DRIVES.MY_DRIVE false is not supported: My Drive is always watched (limit it with CLOUD.ALLOWED.FILE_PATHS).');
    }
  }
  out.warnings.push('Config key "CLOUD.DRIVES" was replaced by "CLOUD.TEAMDRIVE" and "CLOUD.TEAMDRIVES"; shared-drive values were kept.');
}
