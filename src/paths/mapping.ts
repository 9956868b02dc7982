import type { Logger } from "../core/logger.ts";
import { isAbsolutePath, isWindowsPath, normalizePath, withTrailingSlash } from "./normalize.ts";

/**
 * `SERVER_PATH_MAPPINGS`: each key is a folder as the media server sees it; its values are equivalent forms of the
 * same place (a container mount, a host mount, a drive path such as `My Drive/Media/Movies/`).
 *
 * Unlike plex_autoscan (first prefix in file order, matched mid-segment), the longest matching form wins and matching
 * is on whole path segments: `/mnt/Movies/` never matches `/mnt/Movies4K/x.mkv`.
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
  /** Any listed form → server form. An unmapped path passes unchanged (logged at debug). */
  toServer(path: string): MappedPath;
  /** Server form → every form under which autoscan may find the file on its own disk, best first. */
  localForms(serverPath: string): string[];
  /** Server form → the cloud-drive form (`My Drive/…`), if a drive form is listed. */
  toDrive(serverPath: string): string | undefined;
}

interface Form {
  readonly prefix: string;
  readonly key: string;
  readonly folded: boolean;
  /** Position in the user's file, for reverse lookups that keep the listed order. */
  readonly order: number;
}

export function createPathMapper(options: PathMapperOptions): PathMapper {
  const forms = buildForms(options.mappings);
  const existForms = buildForms(options.existMappings ?? {});
  const log = options.log;

  return {
    toServer(raw) {
      const path = normalizePath(raw);
      const match = longestMatch(forms, path);
      if (!match) {
        log?.debug({ path }, "Path is not under any SERVER_PATH_MAPPINGS form; passing it unchanged");
        return { path, known: false };
      }
      if (match.form.prefix === match.form.key) return { path, known: true };
      return { path: match.form.key + match.rest, from: match.form.prefix, known: true };
    },
    localForms(serverPath) {
      const path = normalizePath(serverPath);
      const out: string[] = [];
      const exist = longestMatch(existForms, path);
      if (exist) out.push(exist.form.key + exist.rest);
      out.push(path);
      for (const form of reverseForms(forms, path)) if (isAbsolutePath(form)) out.push(form);
      return [...new Set(out)];
    },
    toDrive(serverPath) {
      return reverseForms(forms, normalizePath(serverPath)).find((form) => !isAbsolutePath(form));
    },
  };
}

function buildForms(mappings: PathMappings): Form[] {
  const forms: Form[] = [];
  for (const [rawKey, values] of Object.entries(mappings)) {
    const key = withTrailingSlash(normalizePath(rawKey));
    for (const raw of [rawKey, ...values]) {
      const prefix = withTrailingSlash(normalizePath(raw));
      forms.push({ prefix, key, folded: isWindowsPath(raw), order: forms.length });
    }
  }
  // Longest first, so the most specific form wins whatever the file order.
  return forms.sort((a, b) => b.prefix.length - a.prefix.length);
}

function longestMatch(forms: readonly Form[], path: string): { form: Form; rest: string } | undefined {
  for (const form of forms) {
    const rest = restAfter(form, path);
    if (rest !== undefined) return { form, rest };
  }
  return undefined;
}

/** The part of `path` after the form's prefix, on whole segments; a path equal to the form without its slash → "". */
function restAfter(form: Form, path: string): string | undefined {
  const bare = form.prefix.slice(0, -1);
  const same = (a: string, b: string): boolean => (form.folded ? a.toLowerCase() === b.toLowerCase() : a === b);
  if (same(path, bare)) return "";
  const head = path.slice(0, form.prefix.length);
  return same(head, form.prefix) ? path.slice(form.prefix.length) : undefined;
}

/** Server form → the other listed forms of the same place, in the order the user listed them. */
function reverseForms(forms: readonly Form[], path: string): string[] {
  const keyMatch = forms
    .filter((form) => form.prefix === form.key)
    .map((form) => ({ form, rest: restAfter(form, path) }))
    .find((match) => match.rest !== undefined);
  if (!keyMatch || keyMatch.rest === undefined) return [];
  const { form, rest } = keyMatch;
  return forms
    .filter((f) => f.key === form.key && f.prefix !== f.key)
    .sort((a, b) => a.order - b.order)
    .map((f) => f.prefix + rest);
}
