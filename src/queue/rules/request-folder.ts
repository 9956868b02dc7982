import type { ScanRequest } from "../../core/scan.ts";
import { normalizeSeparators, parentFolder, toNfc, withoutTrailingSlash } from "../../paths/normalize.ts";

/**
 * The unit of work is the folder to scan. A file request scans its parent folder; a folder request scans the folder.
 * A path whose kind the sender could not say (`unknown`: a pasted manual path, `?path=`, plex_autoscan's queue) and
 * the disk could not tell either (see `resolve-kind.ts`) is scanned as given, as a folder naming itself: it is never
 * widened to its parent by guessing from its name (`The.Matrix.1999.1080p` and `Show.S01` are folders). The file check
 * still looks at the disk and scans a file's folder if that is what the path turns out to be.
 *
 * `folder` is the merge key, compared as stored: it is the folder in NFC, so two spellings of one folder (NFC from
 * Linux, NFD from a Mac) wait as one item. The key is never sent anywhere; what is scanned is spelled as found on disk,
 * or as first received (`file-check.ts`). `path` keeps the received bytes.
 */
export interface RequestFolder {
  /** The merge key: the folder to scan, NFC. */
  readonly folder: string;
  /** The folder to scan in the received bytes. */
  readonly receivedFolder: string;
  /** The path as requested, received bytes, separators tidied, no trailing `/` (the file to check for, or the folder). */
  readonly path: string;
  readonly treatedAs: "file" | "folder";
}

export function requestFolder(request: Pick<ScanRequest, "path" | "kind">): RequestFolder {
  const path = withoutTrailingSlash(normalizeSeparators(request.path));
  const treatedAs = request.kind === "file" ? "file" : "folder";
  const receivedFolder = treatedAs === "file" ? parentFolder(path) : path;
  return { folder: toNfc(receivedFolder), receivedFolder, path, treatedAs };
}
