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
  /** Every key taken out without its value going elsewhere, with why, for `config upgrade` to report. */
  readonly dropped: DroppedKey[];
  /** Values changed to one autoscan supports (`PLEX_ANALYZE_TYPE "loudness" → "basic"`), with why. */
  readonly changed: string[];
  /** New section name → the name in the user's file (`CLOUD` → `GOOGLE`), for problem messages. */
  readonly aliases: Map<string, string>;
}

/** A key taken out of the file: `key` as written (`GDRIVE.IGNORE_PATHS`), `why` in a few words (`obsolete in …`). */
export interface DroppedKey {
  readonly key: string;
  readonly why: string;
}

const REMOVED: Readonly<Record<string, string>> = {
  USE_QUOTED_SCAN_DIRECTORY: "paths always reach the scanner intact now",
  PLEX_SECTION_PATH_MAPPINGS: "sections come from Plex itself now; `autoscan sections` lists them",
  PLEX_SECTION_PATH_MAPPINGS_WITH_API: "sections come from Plex's API always now",
  USE_SMI2SRT: "subtitle conversion is not part of autoscan",
  PLEX_ASSET_EXTENSIONS: "a key of the by275 fork that autoscan does not support",
  PLEX_EXTRA_DIRS: "a key of the by275 fork that autoscan does not support",
};

const OBSOLETE = "obsolete in autoscan";
const alsoSet = (to: string): string => `replaced by ${to}, which is also set (that value is kept)`;

const isObject = (value: unknown): value is Raw => typeof value === "object" && value !== null && !Array.isArray(value);

export function migrateLegacyKeys(input: Raw): LegacyResult {
  const raw: Raw = structuredClone(input);
  const out: LegacyResult = { raw, warnings: [], notes: [], renamed: [], dropped: [], changed: [], aliases: new Map() };
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
      out.dropped.push({ key, why: `${OBSOLETE} (${why})` });
      out.warnings.push(`Config key "${key}" is obsolete and ignored: ${why}; remove the key.`);
    }
  }
  return out;
}

function moveSection(out: LegacyResult, from: string, to: string, legacy: boolean): void {
  const section = out.raw[from];
  if (section === undefined) return;
  delete out.raw[from];
  if (out.raw[to] !== undefined) {
    out.dropped.push({ key: from, why: `replaced by ${to}, which is also in the file (its settings are kept; merge any of ${from}'s you need into it)` });
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
    out.dropped.push({ key: `${prefix}${from}`, why: alsoSet(`${prefix}${to}`) });
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
    const kept = ["ENABLED", "RC_URL", "FILE_EXISTS_TO_REMOTE_MAPPINGS"];
    rclone.RC_CACHE_REFRESH = Object.fromEntries(kept.filter((key) => old[key] !== undefined).map((key) => [key, old[key]]));
    out.renamed.push("RCLONE_RC_CACHE_EXPIRE → RCLONE.RC_CACHE_REFRESH");
    for (const key of Object.keys(old).filter((key) => !kept.includes(key))) {
      out.dropped.push({ key: `RCLONE_RC_CACHE_EXPIRE.${key}`, why: `${OBSOLETE} (RCLONE.RC_CACHE_REFRESH has no such key)` });
    }
  } else {
    out.dropped.push({ key: "RCLONE_RC_CACHE_EXPIRE", why: isObject(old) ? alsoSet("RCLONE.RC_CACHE_REFRESH") : "replaced by RCLONE.RC_CACHE_REFRESH (not a section: nothing to keep)" });
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
    moveInto(out, `${section}.ALLOW_PATHS`, "CLOUD.ALLOWED.FILE_PATHS", () => {
      if ("FILE_PATHS" in allowed) return false;
      allowed.FILE_PATHS = cloud.ALLOW_PATHS;
      return true;
    });
    delete cloud.ALLOW_PATHS;
    out.warnings.push(`Config key "${section}.ALLOW_PATHS" was replaced by "CLOUD.ALLOWED.FILE_PATHS"; its value was kept.`);
  }
  if ("SCAN_EXTENSIONS" in cloud) {
    moveInto(out, `${section}.SCAN_EXTENSIONS`, "CLOUD.ALLOWED.FILE_EXTENSIONS_LIST", () => {
      if ("FILE_EXTENSIONS_LIST" in allowed) return false;
      allowed.FILE_EXTENSIONS_LIST = cloud.SCAN_EXTENSIONS;
      allowed.FILE_EXTENSIONS = true;
      return true;
    });
    delete cloud.SCAN_EXTENSIONS;
    out.warnings.push(`Config key "${section}.SCAN_EXTENSIONS" was replaced by "CLOUD.ALLOWED.FILE_EXTENSIONS_LIST".`);
  }
  if ("IGNORE_PATHS" in cloud) {
    delete cloud.IGNORE_PATHS;
    out.dropped.push({ key: `${section}.IGNORE_PATHS`, why: `${OBSOLETE} (list the wanted paths in CLOUD.ALLOWED.FILE_PATHS)` });
    out.warnings.push(`Config key "${section}.IGNORE_PATHS" is obsolete and ignored: list the wanted paths in CLOUD.ALLOWED.FILE_PATHS.`);
  }
  migrateDrives(out, cloud, section);
}

/** A key whose value moves elsewhere: a rename when `move` took the value, dropped when the new key was already set. */
function moveInto(out: LegacyResult, from: string, to: string, move: () => boolean): void {
  if (move()) out.renamed.push(`${from} → ${to}`);
  else out.dropped.push({ key: from, why: alsoSet(to) });
}

/** by275 offered `loudness` analysis; Plex's API has no such step, so basic analysis runs instead. */
function migrateAnalyzeType(out: LegacyResult): void {
  const type = out.raw.PLEX_ANALYZE_TYPE;
  if (typeof type !== "string" || type.toLowerCase() !== "loudness") return;
  out.raw.PLEX_ANALYZE_TYPE = "basic";
  out.changed.push(`PLEX_ANALYZE_TYPE "${type}" → "basic": by275's loudness analysis is not supported`);
  out.warnings.push('PLEX_ANALYZE_TYPE "loudness" (by275) is not supported: basic analysis runs instead.');
}

/** by275: `DRIVES: {MY_DRIVE, SHARED_DRIVES, SHARED_DRIVES_LIST}` → `TEAMDRIVE` + `TEAMDRIVES`. */
function migrateDrives(out: LegacyResult, cloud: Raw, section: string): void {
  const drives = cloud.DRIVES;
  if (drives === undefined) return;
  delete cloud.DRIVES;
  const moves: Readonly<Record<string, string>> = { SHARED_DRIVES: "TEAMDRIVE", SHARED_DRIVES_LIST: "TEAMDRIVES" };
  if (!isObject(drives)) out.dropped.push({ key: `${section}.DRIVES`, why: "replaced by CLOUD.TEAMDRIVE and CLOUD.TEAMDRIVES (not a section: nothing to keep)" });
  else {
    for (const [key, value] of Object.entries(drives)) {
      const to = moves[key];
      if (to) {
        moveInto(out, `${section}.DRIVES.${key}`, `CLOUD.${to}`, () => {
          if (to in cloud) return false;
          cloud[to] = value;
          return true;
        });
      }
      else if (key === "MY_DRIVE") out.dropped.push({ key: `${section}.DRIVES.MY_DRIVE`, why: `${OBSOLETE} (My Drive is always watched; limit it with CLOUD.ALLOWED.FILE_PATHS)` });
      else out.dropped.push({ key: `${section}.DRIVES.${key}`, why: `${OBSOLETE} (not a by275 key autoscan knows)` });
    }
    if (drives.MY_DRIVE === false) {
      out.warnings.push('CLOUD.DRIVES.MY_DRIVE false is not supported: My Drive is always watched (limit it with CLOUD.ALLOWED.FILE_PATHS).');
    }
  }
  out.warnings.push('Config key "CLOUD.DRIVES" was replaced by "CLOUD.TEAMDRIVE" and "CLOUD.TEAMDRIVES"; shared-drive values were kept.');
}
