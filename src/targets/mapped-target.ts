import type { LibraryLookup, Target } from "../core/target.ts";
import { createPathMapper, type PathMappings } from "../paths/mapping.ts";

/**
 * A target that sees the media under other paths than the primary Plex (`TARGETS.<name>.PATH_MAPPINGS`, the shape
 * of `SERVER_PATH_MAPPINGS`: `{"<path as this target sees it>/": ["<path in the primary Plex's form>/", …]}`, longest
 * whole segment first). The folder and the requested files are put in the target's form before it gets them; a path
 * no mapping matches is passed as it is.
 */
export function withPathMappings(target: Target, mappings: PathMappings): Target {
  if (Object.keys(mappings).length === 0) return target;
  const mapper = createPathMapper({ mappings });
  const toTarget = (path: string): string => mapper.toServer(path).path;
  return {
    name: target.name,
    scan: (folder, context) =>
      target.scan(toTarget(folder), {
        ...context,
        files: context.files.map(toTarget),
        sources: context.sources.map((source) => ({ ...source, path: toTarget(source.path) })),
      }),
    isAvailable: () => target.isAvailable(),
    ...(target.lookup ? { lookup: mappedLookup(target.lookup, toTarget) } : {}),
    ...(target.refresher ? { refresher: { refresh: (files, wish, signal) => target.refresher!.refresh(files.map(toTarget), wish, signal) } } : {}),
  };
}

/** The lookup in the target's form, answered by the files as the queue names them. */
function mappedLookup(lookup: LibraryLookup, toTarget: (path: string) => string): LibraryLookup {
  return {
    // Read at each use: a Jellyfin target's delay depends on how its last scan went (the TargetedScan plugin or not).
    get settleMs() {
      return lookup.settleMs;
    },
    async find(files, signal) {
      const found = await lookup.find(files.map(toTarget), signal);
      return new Map(files.map((file) => [file, found.get(toTarget(file)) ?? false]));
    },
  };
}
