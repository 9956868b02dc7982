import * as v from "valibot";
import { isAbsolutePath } from "../paths/normalize.ts";

/**
 * Valibot pieces for the path fields we read from senders. Every path that reaches a `ScanRequest` went through one
 * of these, so a NUL byte, a control character or a `..` segment never gets as far as the queue or a Plex URL.
 */

/** Longer than any real path (PATH_MAX is 4096 on Linux); beyond it the body is junk, not a path. */
export const MAX_PATH_LENGTH = 4096;

// C0 controls and DEL: no media file has them in its name, and NUL would cut a path short in native code.
const CONTROL = /[\u0000-\u001f\u007f]/;

export function hasControlCharacter(text: string): boolean {
  return CONTROL.test(text);
}

/** True when a segment of the path is `..` (either separator), which could climb out of a library folder. */
export function hasParentSegment(text: string): boolean {
  return text.includes("..") && text.split(/[\\/]/).some((segment) => segment === "..");
}

const pathText = v.pipe(
  v.string("must be a string"),
  v.nonEmpty("must not be empty"),
  v.maxLength(MAX_PATH_LENGTH, `must be at most ${MAX_PATH_LENGTH} characters`),
  v.check((text) => !hasControlCharacter(text), "must not contain NUL or other control characters"),
  v.check((text) => !hasParentSegment(text), "must not contain '..' segments"),
);

/** An absolute path (POSIX, `C:\…` or `\\server\share\…`), as every *arr app sends them. */
export const absolutePath = v.pipe(
  pathText,
  v.check((text) => isAbsolutePath(text), "must be an absolute path (/… or C:\\… or \\\\server\\share\\…)"),
);

/** A path relative to a folder the same payload gives (`episodeFile.relativePath`). */
export const relativePath = v.pipe(
  pathText,
  v.check((text) => !isAbsolutePath(text), "must be relative to the series or movie folder"),
);

/** A path that may be in any mapped form, absolute or a drive form (`My Drive/Media/…`); mapping decides. */
export const anyFormPath = pathText;

/** The files in one payload: more than this is not a real import, and would only flood the queue. */
export const MAX_FILES_PER_PAYLOAD = 10_000;

/** `folder` + `relative`, with exactly one separator; Windows separators are folded later by normalizePath. */
export function joinPath(folder: string, relative: string): string {
  const head = folder.replace(/[\\/]+$/, "");
  const tail = relative.replace(/^[\\/]+/, "");
  const separator = /^[A-Za-z]:[\\/]|^\\\\/.test(folder) && !folder.includes("/") ? "\\" : "/";
  return `${head}${separator}${tail}`;
}

/** The folder holding `path`, in the sender's own spelling (either separator); the root stays the root. */
export function parentOf(path: string): string {
  const trimmed = path.replace(/(?<=.)[\\/]+$/, "");
  const cut = Math.max(trimmed.lastIndexOf("/"), trimmed.lastIndexOf("\\"));
  if (cut < 0) return trimmed;
  const head = trimmed.slice(0, cut);
  // `/Show.mkv` → `/`, `C:\Show.mkv` → `C:\`: keep the root's separator.
  return head === "" || /^[A-Za-z]:$/.test(head) ? trimmed.slice(0, cut + 1) : head;
}
