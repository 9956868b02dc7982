import type { ScanRequest } from "../core/scan.ts";
import { normalizePath, parentFolder, withoutTrailingSlash } from "../paths/normalize.ts";

/**
 * The unit of work is the folder to scan. A file request scans its parent folder; a folder request scans the folder.
 * When the sender could not say (`unknown`, e.g. a pasted manual path), a last segment that ends in an
 * extension-like suffix (`.mkv`, `.srt`: a dot and 1–5 letters or digits) is taken for a file, anything else (or a
 * path ending in `/`) for a folder. The file check corrects the guess at dispatch time.
 */
export interface WorkUnit {
  readonly folder: string;
  /** The path as requested, normalised (the file to check for, or the folder itself). */
  readonly path: string;
  readonly treatedAs: "file" | "folder";
}

const EXTENSION_LIKE = /^.+\.[A-Za-z0-9]{1,5}$/;

export function resolveWorkUnit(request: Pick<ScanRequest, "path" | "kind">): WorkUnit {
  const normalized = normalizePath(request.path);
  const path = withoutTrailingSlash(normalized);
  const treatedAs = request.kind === "unknown" ? guessKind(normalized) : request.kind;
  return { folder: treatedAs === "file" ? parentFolder(path) : path, path, treatedAs };
}

function guessKind(path: string): "file" | "folder" {
  if (path.endsWith("/")) return "folder";
  const lastSegment = path.slice(path.lastIndexOf("/") + 1);
  return EXTENSION_LIKE.test(lastSegment) ? "file" : "folder";
}
