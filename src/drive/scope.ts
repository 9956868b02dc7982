/**
 * Which OAuth scope the monitor asks for. It only reads metadata: the change feed (`changes.list`,
 * `changes.getStartPageToken`), names and parents (`files.get`), and shared-drive names (`drives.list/get`).
 * It never downloads, uploads or edits anything.
 *
 * - My Drive only: `drive.metadata.readonly` is enough for `changes.*` and `files.get` (the discovery document lists
 *   it for each), and it grants no access to file contents.
 * - Shared drives: `drives.list` and `drives.get` accept only `drive` and `drive.readonly`, and their names are needed
 *   because `files.get(<driveId>)` answers `name: "Drive"` for every shared drive. So `drive.readonly` then.
 */
const PREFIX = "https://www.googleapis.com/auth/";

export const SCOPE_METADATA_READONLY = `${PREFIX}drive.metadata.readonly`;
export const SCOPE_READONLY = `${PREFIX}drive.readonly`;
export const SCOPE_FULL = `${PREFIX}drive`;

export interface ScopeNeeds {
  /** Shared drives are watched (their names come from `drives.get`). */
  readonly sharedDrives: boolean;
}

export function requiredScope(needs: ScopeNeeds): string {
  return needs.sharedDrives ? SCOPE_READONLY : SCOPE_METADATA_READONLY;
}

/** Scopes that let the monitor see every file's metadata in My Drive. */
const SEES_MY_DRIVE = new Set([SCOPE_FULL, SCOPE_READONLY, SCOPE_METADATA_READONLY, `${PREFIX}drive.metadata`]);
/** Scopes that also allow `drives.list/get`. */
const SEES_SHARED_DRIVE_NAMES = new Set([SCOPE_FULL, SCOPE_READONLY]);

/**
 * Whether a granted scope list (space- or comma-separated, full URLs or rclone's short names) covers what the monitor
 * needs. Returns the reason when it does not.
 */
export function checkGrantedScope(granted: string, needs: ScopeNeeds): { ok: true } | { ok: false; reason: string } {
  const scopes = expandScopes(granted);
  if (![...scopes].some((scope) => SEES_MY_DRIVE.has(scope))) {
    return {
      ok: false,
      reason: `the granted scope (${granted || "none"}) does not let autoscan read the metadata of every file; it needs ${requiredScope(needs)}`,
    };
  }
  if (needs.sharedDrives && ![...scopes].some((scope) => SEES_SHARED_DRIVE_NAMES.has(scope))) {
    return {
      ok: false,
      reason: `shared drives are enabled (CLOUD.TEAMDRIVE) but the granted scope (${granted}) cannot read shared-drive names; it needs ${SCOPE_READONLY}`,
    };
  }
  return { ok: true };
}

/** `drive.readonly,drive.file` or `https://…/drive.readonly https://…/drive` → full scope URLs. */
export function expandScopes(granted: string): Set<string> {
  return new Set(
    granted
      .split(/[\s,]+/)
      .filter(Boolean)
      .map((scope) => (scope.startsWith("https://") ? scope : PREFIX + scope)),
  );
}
