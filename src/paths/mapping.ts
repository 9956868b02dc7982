import type { Logger } from "../core/logger.ts";
import { isAbsolutePath, isWindowsPath, normalizePath, normalizeSeparators, withTrailingSlash } from "./normalize.ts";

/**
 * `SERVER_PATH_MAPPINGS`: each key is a folder as the media server sees it; its values are equivalent forms of the
 * same place (a container mount, a host mount, a drive path such as `My Drive/Media/Movies/`).
 *
 * Unlike plex_autoscan (first prefix in file order, matched mid-segment), the longest matching form wins and matching
 * is on whole path segments: `/mnt/Movies/` never matches `/mnt/Movies4K/x.mkv`.
 *
 * Prefixes are compared in NFC (a form typed on Linux matches a path a Mac sent), but only the prefix is swapped:
 * the rest of the path keeps the bytes it was received with, because that is how the name is spelled on disk (Linux
 * compares names byte for byte). The prefix that replaces it is spelled as the user wrote it in the config.
 */
export type PathMappings = Readonly<Record<string, readonly string[]>>;

export interface PathMapperOptions {
  readonly mappings: PathMappings;
  /** `SERVER_FILE_EXIST_PATH_MAPPINGS`: key = path as autoscan sees it, values = server-side prefixes. */
  readonly existMappings?: PathMappings;
  readonly log?: Logger;
}

export interface MappedPath {
  /** The path in the media server's form. */
  readonly path: string;
  /** The form that matched (`undefined` when the path passed unchanged or was already in server form). */
  readonly from?: string;
  /** True when the path fell under a mapping (in any of its forms, the server form included). */
  readonly known: boolean;
}

export interface PathMapper {
  /**
   * Any listed form → server form; the part after the matched prefix keeps its received bytes. An unmapped path
   * passes unchanged (separators tidied; logged at debug).
   */
  toServer(path: string): MappedPath;
  /**
   * Server form → every form under which autoscan may find the file on its own disk, best first, each with the
   * server path's own bytes after the prefix (the disk check tries the other Unicode spelling itself).
   */
  localForms(serverPath: string): string[];
  /** Server form → the cloud-drive form (`My Drive/…`), if a drive form is listed. */
  toDrive(serverPath: string): string | undefined;
}

interface Form {
  /** The form, NFC, with a trailing slash: what a path is compared with. */
  readonly prefix: string;
  /** Its mapping key, NFC, with a trailing slash. */
  readonly key: string;
  /** The form and the key as the user wrote them (separators tidied): what goes into a mapped path. */
  readonly prefixText: string;
  readonly keyText: string;
  /** Windows forms compare case-insensitively. */
  readonly folded: boolean;
  /** Whole segments in `prefix` (its `/` count): where the received rest starts. */
  readonly slashes: number;
  /** Position in the user's file, for reverse lookups that keep the listed order. */
  readonly order: number;
}

export function createPathMapper(options: PathMapperOptions): PathMapper {
  const forms = buildForms(options.mappings);
  const existForms = buildForms(options.existMappings ?? {});
  const log = options.log;

  return {
    toServer(raw) {
      const path = normalizeSeparators(raw);
      const match = longestMatch(forms, path);
      if (!match) {
        log?.debug({ path }, "Path is not under any SERVER_PATH_MAPPINGS form; passing it unchanged");
        return { path, known: false };
      }
      if (match.form.prefix === match.form.key) return { path, known: true };
      return { path: match.form.keyText + match.rest, from: match.form.prefixText, known: true };
    },
    localForms(serverPath) {
      const path = normalizeSeparators(serverPath);
      const out: string[] = [];
      const exist = longestMatch(existForms, path);
      if (exist) out.push(exist.form.keyText + exist.rest);
      out.push(path);
      for (const form of reverseForms(forms, path)) if (isAbsolutePath(form)) out.push(form);
      return [...new Set(out)];
    },
    toDrive(serverPath) {
      return reverseForms(forms, normalizeSeparators(serverPath)).find((form) => !isAbsolutePath(form));
    },
  };
}

function buildForms(mappings: PathMappings): Form[] {
  const forms: Form[] = [];
  for (const [rawKey, values] of Object.entries(mappings)) {
    const key = withTrailingSlash(normalizePath(rawKey));
    const keyText = withTrailingSlash(normalizeSeparators(rawKey));
    for (const raw of [rawKey, ...values]) {
      const prefix = withTrailingSlash(normalizePath(raw));
      const prefixText = withTrailingSlash(normalizeSeparators(raw));
      const slashes = prefix.split("/").length - 1;
      forms.push({ prefix, key, prefixText, keyText, folded: isWindowsPath(raw), slashes, order: forms.length });
    }
  }
  // Longest first, so the most specific form wins whatever the file order.
  return forms.sort((a, b) => b.prefix.length - a.prefix.length);
}

/** `path` has tidy separators and its received bytes; it is compared in NFC, and the rest keeps its bytes. */
function longestMatch(forms: readonly Form[], path: string): { form: Form; rest: string } | undefined {
  const compared = normalizePath(path);
  for (const form of forms) {
    const rest = restAfter(form, path, compared);
    if (rest !== undefined) return { form, rest };
  }
  return undefined;
}

/**
 * The part of `path` after the form's prefix, on whole segments, in the received bytes; a path equal to the form
 * without its slash → "". `compared` is `path` in NFC: the prefix test runs on it, and the rest is cut from `path`
 * after as many `/` as the prefix has (normalisation never adds or removes a `/`).
 */
function restAfter(form: Form, path: string, compared: string): string | undefined {
  const bare = form.prefix.slice(0, -1);
  const same = (a: string, b: string): boolean => (form.folded ? a.toLowerCase() === b.toLowerCase() : a === b);
  if (same(compared, bare)) return "";
  if (!same(compared.slice(0, form.prefix.length), form.prefix)) return undefined;
  let cut = -1;
  for (let i = 0; i < form.slashes; i++) cut = path.indexOf("/", cut + 1);
  return path.slice(cut + 1);
}

/** Server form → the other listed forms of the same place, in the order the user listed them. */
function reverseForms(forms: readonly Form[], path: string): string[] {
  const compared = normalizePath(path);
  const keyMatch = forms
    .filter((form) => form.prefix === form.key)
    .map((form) => ({ form, rest: restAfter(form, path, compared) }))
    .find((match) => match.rest !== undefined);
  if (!keyMatch || keyMatch.rest === undefined) return [];
  const { form, rest } = keyMatch;
  return forms
    .filter((f) => f.key === form.key && f.prefix !== f.key)
    .sort((a, b) => a.order - b.order)
    .map((f) => f.prefixText + rest);
}

/**
 * The process's one path mapper, replaceable while it runs (a config reload): every holder calls through it, so the
 * next request, file check or Drive change uses the new mappings; a call in progress finishes with the old ones.
 */
export interface LivePathMapper extends PathMapper {
  replace(options: PathMapperOptions): void;
}

export function createLivePathMapper(options: PathMapperOptions): LivePathMapper {
  let current = createPathMapper(options);
  return {
    toServer: (path) => current.toServer(path),
    localForms: (serverPath) => current.localForms(serverPath),
    toDrive: (serverPath) => current.toDrive(serverPath),
    replace(next) {
      current = createPathMapper(next);
    },
  };
}
