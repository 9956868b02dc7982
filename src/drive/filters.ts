/**
 * `CLOUD.ALLOWED`, with plex_autoscan's semantics (docs: ../shared/reference/plex_autoscan.md §4):
 * - `FILE_PATHS`: case-insensitive prefixes of the drive path (`My Drive/Media/Movies/`). Always applied: an empty
 *   list lets nothing through.
 * - `FILE_EXTENSIONS_LIST`: applied only when `FILE_EXTENSIONS` is true; case-insensitive, with or without the dot.
 * - `MIME_TYPES_LIST`: applied only when `MIME_TYPES` is true; case-insensitive prefixes (`video` matches
 *   `video/x-matroska`). A `video/*` file named `*.sub` is refused, as plex_autoscan did (subtitle files that Drive
 *   mistakes for MPEG video).
 */
export interface DriveFilterOptions {
  readonly filePaths: readonly string[];
  readonly fileExtensions: boolean;
  readonly fileExtensionsList: readonly string[];
  readonly mimeTypes: boolean;
  readonly mimeTypesList: readonly string[];
}

export type FilterVerdict = { readonly pass: true } | { readonly pass: false; readonly reason: string };

export type DriveFilter = (drivePath: string, mimeType: string | undefined) => FilterVerdict;

export function createDriveFilter(options: DriveFilterOptions): DriveFilter {
  const prefixes = options.filePaths.filter(Boolean).map((prefix) => prefix.normalize("NFC").toLowerCase());
  const extensions = options.fileExtensionsList
    .map((ext) => ext.trim().toLowerCase().replace(/^\.+/, ""))
    .filter(Boolean)
    .map((ext) => `.${ext}`);
  const mimes = options.mimeTypesList.map((mime) => mime.trim().toLowerCase()).filter(Boolean);

  return (drivePath, mimeType) => {
    const path = drivePath.normalize("NFC").toLowerCase();
    if (!prefixes.some((prefix) => path.startsWith(prefix))) {
      return { pass: false, reason: "not under CLOUD.ALLOWED.FILE_PATHS" };
    }
    if (options.fileExtensions && !extensions.some((ext) => path.endsWith(ext))) {
      return { pass: false, reason: "extension not in CLOUD.ALLOWED.FILE_EXTENSIONS_LIST" };
    }
    if (options.mimeTypes) {
      const mime = (mimeType ?? "").toLowerCase();
      if (!mimes.some((prefix) => mime.startsWith(prefix))) {
        return { pass: false, reason: `MIME type ${mimeType ?? "(none)"} not in CLOUD.ALLOWED.MIME_TYPES_LIST` };
      }
      if (mime.startsWith("video") && path.endsWith(".sub")) return { pass: false, reason: "a .sub file typed as video" };
    }
    return { pass: true };
  };
}
