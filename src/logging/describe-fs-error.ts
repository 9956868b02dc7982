const REASONS: Readonly<Record<string, string>> = {
  ENOSPC: "disk full",
  EDQUOT: "disk quota exceeded",
  EROFS: "read-only file system",
  EACCES: "permission denied",
  EPERM: "not permitted",
  ENOENT: "its folder is gone",
  ENOTDIR: "a part of its path is not a folder",
  EEXIST: "a file stands where its folder should be",
  EISDIR: "it is a folder",
  EIO: "I/O error",
  EPIPE: "the reader went away (broken pipe)",
  EFBIG: "file too large",
  EMFILE: "too many open files",
  ENFILE: "too many open files",
};

/** `disk full (ENOSPC)`: what the reader of a warning about a failed write needs, in words, with the code to search for. */
export function describeFsError(error: unknown): string {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code === "string") return `${REASONS[code] ?? String(message ?? "error")} (${code})`;
  return String(message ?? error);
}
