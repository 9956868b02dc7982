import type { DiskEntry } from "./disk-probe.ts";
import type { PathMapper } from "./mapping.ts";
import { isAbsolutePath, isWindowsPath, normalizeSeparators, parentFolder, withoutTrailingSlash } from "./normalize.ts";
import { carrySpelling, findSpelling } from "./spelling.ts";

/**
 * Where a path lands before it is queued (the Scan page, the Libraries page, `cmd=preview`): the mapping form that
 * matched, the path in the media server's form, the Plex sections that hold it, what autoscan finds on its own disk,
 * and the folder that would be scanned, decided as the queue decides it (`queue/resolve-kind.ts`, `requestFolder` in
 * `queue/rules/enqueue.ts`): a trailing `/` or a folder on disk → the folder itself; a file on disk → its folder; not
 * found → the path as given (a folder naming itself; the file check looks again later).
 *
 * A path that would not be scanned as the user expects comes with `problems`, each a reason and its fix. A file
 * missing on disk is not one of them: it may not have arrived yet.
 *
 * The sections come through a capability (the composition root matches Plex's list, `plex/sections.ts`): this
 * module knows paths, not Plex.
 */
export interface PathPreview {
  /** The path as given (trimmed). */
  readonly input: string;
  /** The `SERVER_PATH_MAPPINGS` form that matched (with its trailing slash); absent when none did. */
  readonly matchedForm?: string;
  /** True when the path lies under a mapping in any of its forms (the server's form included). */
  readonly mapped: boolean;
  /** The path in the media server's form. */
  readonly serverPath: string;
  /** The Plex sections whose folders hold it; absent when Plex could not be asked (see `sectionsError`). */
  readonly sections?: readonly { readonly id: string; readonly title: string }[];
  readonly sectionsError?: string;
  /** What autoscan finds at the path on its own disk. */
  readonly onDisk: "file" | "folder" | "missing" | "not checkable";
  /** Where it looked (the form it was found under, else the first local form). */
  readonly localPath?: string;
  /** Every local form looked at, best first (absent when none could be looked at). */
  readonly lookedAt?: readonly string[];
  /** The folder that would be scanned. */
  readonly scanFolder: string;
  /** Why the path would not be scanned as the user expects, each with its fix; empty when all is well. */
  readonly problems: readonly PreviewProblem[];
}

export interface PreviewProblem {
  readonly reason: string;
  /** Names the key or the command; `code` is written between backticks. */
  readonly fix: string;
}

export interface PathPreviewOptions {
  readonly mapper: Pick<PathMapper, "toServer" | "localForms">;
  /** Whether `SERVER_PATH_MAPPINGS` has any entry (it follows config reloads when the mapper does). */
  readonly hasMappings: () => boolean;
  /**
   * The Plex sections whose folders hold a folder in the server's form, most specific first. Absent, or throwing:
   * Plex could not be asked, and the error's message says why.
   */
  readonly sectionsHolding?: (folder: string, signal?: AbortSignal) => Promise<readonly { readonly id: string; readonly title: string }[]>;
  /** What is at a local path: the service's shared `DiskProbe.stat` (bounded, never hangs on a dead mount). */
  readonly stat: (localPath: string) => Promise<DiskEntry>;
  /** The longest the disk lookup may take, all forms together (default 5000 ms); past it, "not checkable". */
  readonly timeoutMs?: number;
  /** Whether a local form can be looked at from here (default: a POSIX path; a Windows one too on Windows). */
  readonly checkable?: (localPath: string) => boolean;
}

export type PathPreviewer = (path: string, signal?: AbortSignal) => Promise<PathPreview>;

const DEFAULT_TIMEOUT_MS = 5_000;

export function createPathPreview(options: PathPreviewOptions): PathPreviewer {
  const timeoutMs = Math.max(1, options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  const checkable = options.checkable ?? defaultCheckable;

  return async (raw, signal) => {
    const input = raw.trim();
    const mapped = options.mapper.toServer(input);
    const serverPath = mapped.path;
    const base = { input, mapped: mapped.known, serverPath, ...(mapped.from !== undefined ? { matchedForm: mapped.from } : {}) };
    const tidy = normalizeSeparators(serverPath);
    const asGiven = withoutTrailingSlash(tidy);

    if (!isAbsolutePath(serverPath) || hasDotDot(tidy)) {
      const problem = isAbsolutePath(serverPath) ? DOT_DOT : notAbsolute(mapped.known);
      return { ...base, sections: [], onDisk: "not checkable", scanFolder: asGiven, problems: [problem] };
    }

    const forms = options.mapper.localForms(asGiven).filter(checkable);
    const disk = forms.length === 0 ? undefined : await lookUp(forms, asGiven, options.stat, timeoutMs);
    const onDisk = disk?.onDisk ?? "not checkable";
    const found = disk?.found ?? asGiven;
    // As the queue does: a trailing `/` says folder; a file scans its folder; anything else is scanned as given.
    const scanFolder = onDisk === "file" && !(tidy.length > 1 && tidy.endsWith("/")) ? parentFolder(found) : found;

    const holding = await askSections(options.sectionsHolding, scanFolder, signal);
    const problems = findProblems({ mapped: mapped.known, hasMappings: options.hasMappings(), holding, serverPath, scanFolder });
    return {
      ...base,
      ...(holding.sections ? { sections: holding.sections } : { sectionsError: holding.error }),
      onDisk,
      ...(disk?.localPath !== undefined ? { localPath: disk.localPath, lookedAt: forms } : {}),
      scanFolder,
      problems,
    };
  };
}

interface DiskLookup {
  readonly onDisk: PathPreview["onDisk"];
  /** Where it was found (or the first form looked at). */
  readonly localPath: string;
  /** The server path, respelled as found on disk (NFC/NFD), without a trailing `/`. */
  readonly found: string;
}

/** Each local form, each under its Unicode spellings, as kind resolution does; bounded by `timeoutMs` in all. */
async function lookUp(
  forms: readonly string[],
  serverPath: string,
  stat: (path: string) => Promise<DiskEntry>,
  timeoutMs: number,
): Promise<DiskLookup> {
  const first = forms[0] ?? serverPath;
  const look = async (): Promise<DiskLookup> => {
    let unanswered = false;
    for (const form of forms) {
      const found = await findSpelling(form, stat);
      if (found.entry === "file" || found.entry === "directory") {
        const onDisk = found.entry === "file" ? "file" : "folder";
        return { onDisk, localPath: found.path, found: carrySpelling(serverPath, form, found.path) };
      }
      if (found.entry === "unanswered") unanswered = true;
    }
    return { onDisk: unanswered ? "not checkable" : "missing", localPath: first, found: serverPath };
  };
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<DiskLookup>((resolve) => {
    timer = setTimeout(() => resolve({ onDisk: "not checkable", localPath: first, found: serverPath }), timeoutMs);
  });
  const failed: DiskLookup = { onDisk: "not checkable", localPath: first, found: serverPath };
  return Promise.race([look().catch(() => failed), late]).finally(() => clearTimeout(timer));
}

type Holding =
  | { readonly sections: readonly { readonly id: string; readonly title: string }[]; readonly error?: undefined }
  | { readonly sections?: undefined; readonly error: string };

async function askSections(
  sectionsHolding: PathPreviewOptions["sectionsHolding"],
  folder: string,
  signal: AbortSignal | undefined,
): Promise<Holding> {
  if (!sectionsHolding) return { error: "Plex is not set up here, so its libraries cannot be checked" };
  try {
    const sections = await sectionsHolding(folder, signal);
    return { sections: sections.map(({ id, title }) => ({ id, title })) };
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
}

function findProblems(facts: {
  readonly mapped: boolean;
  readonly hasMappings: boolean;
  readonly holding: Holding;
  readonly serverPath: string;
  readonly scanFolder: string;
}): PreviewProblem[] {
  const { mapped, hasMappings, holding, scanFolder } = facts;
  const inNoSection = holding.sections !== undefined && holding.sections.length === 0;
  if (!mapped && inNoSection && hasMappings) {
    return [
      {
        reason: `No SERVER_PATH_MAPPINGS form matches this path, and no Plex library holds '${scanFolder}'.`,
        fix:
          "Check the path for a typo. If it is how another app sees the folder, add that form to `SERVER_PATH_MAPPINGS` " +
          "under the folder Plex uses (`autoscan sections` lists Plex's library folders).",
      },
    ];
  }
  if (inNoSection) {
    return [
      {
        reason: `No Plex library holds '${scanFolder}': Plex would not scan it.`,
        fix:
          "Run `autoscan sections` to see Plex's library folders. Add this folder to a library in Plex, or correct " +
          "`SERVER_PATH_MAPPINGS` so that the path becomes the one Plex uses.",
      },
    ];
  }
  if (!mapped && hasMappings && holding.sections === undefined) {
    return [
      {
        reason: `No SERVER_PATH_MAPPINGS form matches this path, and Plex could not be asked whether a library holds it (${holding.error}).`,
        fix:
          "Check the path for a typo, or add the form it starts with to `SERVER_PATH_MAPPINGS`. Once Plex answers, " +
          "`autoscan sections` lists its library folders.",
      },
    ];
  }
  return [];
}

function notAbsolute(mapped: boolean): PreviewProblem {
  return {
    reason: mapped
      ? "The path is not absolute once mapped: its SERVER_PATH_MAPPINGS key is not a full path."
      : "The path is not absolute, and no SERVER_PATH_MAPPINGS form matches its start.",
    fix: mapped
      ? "Make the key in `SERVER_PATH_MAPPINGS` the full folder path Plex uses (starting with `/`)."
      : "Give the full path, starting with `/`, or add the form it starts with (such as `My Drive/Media/`) to `SERVER_PATH_MAPPINGS`.",
  };
}

const DOT_DOT: PreviewProblem = {
  reason: "The path has '..' segments; autoscan refuses them.",
  fix: "Give the path without `..`: the folder's full path as the media server or an *arr app sees it.",
};

function hasDotDot(path: string): boolean {
  return path.split("/").includes("..");
}

function defaultCheckable(localPath: string): boolean {
  return localPath.startsWith("/") || (process.platform === "win32" && isWindowsPath(localPath));
}
