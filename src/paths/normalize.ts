const NON_ASCII = /[^\u0000-\u007f]/;

/**
 * Canonical text form of a path before it is matched: NFC (a macOS-made "é" matches a Linux-made one), Windows
 * separators turned into `/` for Windows-style paths (`C:\Media\TV\…`, `\\server\share\…`), runs of `/` folded.
 * Nothing else changes: spaces, quotes, brackets and non-Latin names pass intact.
 */
export function normalizePath(raw: string): string {
  // Plain ASCII is already NFC (the common case; normalize() costs more than the rest of this function).
  let path = NON_ASCII.test(raw) ? raw.normalize("NFC") : raw;
  if (isWindowsPath(path)) path = path.replace(/\\/g, "/");
  const unc = path.startsWith("//");
  if (path.includes("//")) path = path.replace(/\/{2,}/g, "/");
  return unc ? `/${path}` : path;
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
