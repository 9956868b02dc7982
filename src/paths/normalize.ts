const NON_ASCII = /[^\u0000-\u007f]/;

/**
 * A received path with its separators tidied and nothing else changed: Windows separators turned into `/` for
 * Windows-style paths (`C:\Media\TV\…`, `\\server\share\…`), runs of `/` folded (a UNC share keeps its leading `//`).
 * The characters of every name keep their exact bytes: Linux compares names byte for byte, so a name written in NFD
 * (macOS, SMB from a Mac) is only found under its NFD bytes. This is the form that goes to the disk and to targets.
 */
export function normalizeSeparators(raw: string): string {
  let path = raw;
  if (isWindowsPath(path)) path = path.replace(/\\/g, "/");
  const unc = path.startsWith("//");
  if (path.includes("//")) path = path.replace(/\/{2,}/g, "/");
  return unc ? `/${path}` : path;
}

/**
 * The comparison form of a path: `normalizeSeparators`, then NFC, so a macOS-made "é" compares equal to a Linux-made
 * one. Use it only to compare (mapping prefixes, section locations, queue keys); never send it to a disk or a target:
 * the name it spells may not exist.
 */
export function normalizePath(raw: string): string {
  return toNfc(normalizeSeparators(raw));
}

/** NFC, skipping the work for plain ASCII (already NFC, and the common case). */
export function toNfc(text: string): string {
  return NON_ASCII.test(text) ? text.normalize("NFC") : text;
}

/** True when the text has a character outside ASCII (only such names can have two Unicode spellings). */
export function hasNonAscii(text: string): boolean {
  return NON_ASCII.test(text);
}

/** `C:\…`, `C:/…` or a UNC share `\\server\share\…`. */
export function isWindowsPath(path: string): boolean {
  return /^[A-Za-z]:[\\/]/.test(path) || path.startsWith("\\\\");
}

/** A path that names a place on some disk (POSIX or Windows), as opposed to a drive form like `My Drive/Media/`. */
export function isAbsolutePath(path: string): boolean {
  return path.startsWith("/") || isWindowsPath(path);
}

/** The form with exactly one trailing `/`, for prefix matching on whole segments. */
export function withTrailingSlash(path: string): string {
  return path.endsWith("/") ? path : `${path}/`;
}

/** The parent folder of a path (`/a/b/c.mkv` → `/a/b`); the root stays the root. */
export function parentFolder(path: string): string {
  const trimmed = path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path;
  const cut = trimmed.lastIndexOf("/");
  if (cut <= 0) return cut === 0 ? "/" : trimmed;
  return trimmed.slice(0, cut);
}

/** Drops a trailing `/` (except on the root) so that one folder has one spelling in the queue. */
export function withoutTrailingSlash(path: string): string {
  return path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path;
}
