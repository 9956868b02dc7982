import type { DiskEntry } from "../../paths/disk-probe.ts";
import type { PathMapper, PathMappings } from "../../paths/mapping.ts";
import { createPathPreview, type PathPreviewer } from "../../paths/preview.ts";
import { matchSections, type PlexSection } from "../../targets/plex/sections.ts";
import type { LibrariesReport, LibrarySection, MappingView } from "./sources.ts";
import { STAT_TIMEOUT_MS } from "../../paths/shared-disk-probe.ts";

/**
 * The console's path preview and Libraries report, from what the service already has: the live path mapper, Plex's
 * section list (the resolver the Plex target uses, so both agree), the config's `SERVER_PATH_MAPPINGS`, and the
 * process's one disk probe (its stats share the file checks' budget and never hang on a dead mount).
 *
 * Made again with each app a config reload builds, so `config` is the current one.
 */
export interface ConsolePreviewInput {
  /** The current config (`SERVER_PATH_MAPPINGS`, `PLEX_TOKEN`). */
  readonly config: { readonly SERVER_PATH_MAPPINGS: PathMappings; readonly PLEX_TOKEN: string };
  /** The process's live path mapper. */
  readonly mapper: Pick<PathMapper, "toServer" | "localForms">;
  /** The Plex section resolver (`PrimaryPlex.plex.sections`); absent → the console says Plex is not set up. */
  readonly sections?: {
    resolve(folder: string, signal?: AbortSignal): Promise<readonly PlexSection[]>;
    list(signal?: AbortSignal): Promise<readonly PlexSection[]>;
  };
  /** `sharedDiskProbe(log).stat`. */
  readonly stat: (localPath: string) => Promise<DiskEntry>;
  /** The *arr apps' root folders (`ARR`), as they send paths under them; absent without apps. */
  readonly appRoots?: ((signal?: AbortSignal) => Promise<readonly string[]>) | undefined;
}

export interface ConsolePreviewSources {
  readonly preview: PathPreviewer;
  readonly libraries: (signal?: AbortSignal) => Promise<LibrariesReport>;
}

export function consolePreviewFromConfig(input: ConsolePreviewInput): ConsolePreviewSources {
  const { config } = input;
  const mappings = config.SERVER_PATH_MAPPINGS;
  // Without a token Plex answers 401 to every listing: say what to set instead of relaying the refusal.
  const noToken =
    config.PLEX_TOKEN === "" ? "PLEX_TOKEN is empty, so autoscan cannot ask Plex for its libraries; set PLEX_TOKEN" : undefined;
  const sections = noToken === undefined ? input.sections : undefined;
  const unavailable = noToken ?? "Plex is not set up here, so its libraries cannot be listed";

  const preview = createPathPreview({
    mapper: input.mapper,
    hasMappings: () => Object.keys(mappings).length > 0,
    stat: input.stat,
    timeoutMs: STAT_TIMEOUT_MS,
    sectionsHolding: async (folder, signal) => {
      if (!sections) throw new Error(unavailable);
      return sections.resolve(folder, signal);
    },
  });

  return {
    preview,
    async libraries(signal, recent = []) {
      if (!sections) return { error: unavailable, mappings: describeMappings(mappings, undefined) };
      try {
        const [list, roots] = await Promise.all([sections.list(signal), input.appRoots?.(signal) ?? []]);
        return describeLibraries(list, mappings, [...recent, ...roots]);
      } catch (error) {
        return { error: error instanceof Error ? error.message : String(error), mappings: describeMappings(mappings, undefined) };
      }
    },
  };
}

/**
 * Plex's sections beside the mappings. A section folder is reached when a mapping's server form holds it (the key is
 * the folder, or a folder above it) or lies inside it (the key is a subfolder: part of the library is reached, which
 * is how mappings per show or per disk look). A mapping whose server form neither lies in nor holds any section
 * folder sends its paths nowhere Plex scans: flagged with no sections. Both on whole path segments, in NFC, Windows
 * forms case-insensitive, by the one rule Plex matching uses (`matchSections`).
 *
 * A folder no mapping reaches is reached all the same when the apps send Plex's own paths for it: `sent` (the folders
 * of recent requests in the server's form, and the *arr apps' root folders) lying in it, or holding it, show that, and
 * such a folder is not flagged (`sentAsIs`).
 */
export function describeLibraries(sections: readonly PlexSection[], mappings: PathMappings, sent: readonly string[] = []): LibrariesReport {
  const keys = Object.keys(mappings);
  const out: LibrarySection[] = sections.map((section) => ({
    id: section.id,
    title: section.title,
    type: section.type,
    locations: section.locations.map((path) => {
      const reached = keys.some((key) => related(key, path));
      return { path, reached, ...(!reached && sent.some((folder) => related(path, folder)) ? { sentAsIs: true as const } : {}) };
    }),
  }));
  return { sections: out, mappings: describeMappings(mappings, sections) };
}

function describeMappings(mappings: PathMappings, sections: readonly PlexSection[] | undefined): MappingView[] {
  return Object.entries(mappings).map(([serverForm, forms]) => ({
    serverForm,
    forms: [...forms],
    sections: (sections ?? []).filter((section) => section.locations.some((path) => related(serverForm, path))).map((s) => s.id),
  }));
}

/** One folder holds the other (or they are the same folder). */
function related(a: string, b: string): boolean {
  return holds(a, b) || holds(b, a);
}

function holds(outer: string, inner: string): boolean {
  return matchSections([{ id: "", title: "", type: "", locations: [outer], refreshing: false }], inner).length > 0;
}
