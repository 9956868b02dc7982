import { createPathMapper } from "../../paths/mapping.ts";
import { isWindowsPath, normalizePath, withTrailingSlash } from "../../paths/normalize.ts";
import { ok, skip, warn, type CheckResult } from "./check.ts";
import type { Findings } from "./run-checks.ts";
import type { TargetLibraryFolder, TargetProbe } from "./targets.ts";

/**
 * A scan target's PATH_MAPPINGS against its library folders: the last checks of the `targets` family (targets.ts),
 * with the path helpers they use (`contains`, `unique`). A key in no library is a warning (the folders mapped there
 * are skipped by that target only); a library folder nothing reaches is a warning (it never gets a scan from us).
 * `kind` is the target's label for the messages (`Jellyfin`).
 */
export function mappingChecks(probe: TargetProbe, kind: string, folders: readonly TargetLibraryFolder[], findings: Findings): CheckResult[] {
  const { name } = probe;
  const keys = Object.keys(probe.mappings);
  const known = unique(folders.map((folder) => folder.path)).join(", ") || "(none)";
  const out: CheckResult[] = [];
  for (const key of keys) {
    const id = `target:${name}.mapping:${key}`;
    const holding = folders.filter((folder) => contains(folder.path, key)).map((folder) => folder.library);
    const held = folders.filter((folder) => contains(key, folder.path)).map((folder) => folder.library);
    if (holding.length > 0) out.push(ok(id, `${name} mapping`, `'${key}' is in ${name}'s library ${unique(holding).join(", ")}.`));
    else if (held.length > 0) out.push(ok(id, `${name} mapping`, `'${key}' holds ${name}'s library ${unique(held).join(", ")}.`));
    else {
      out.push(
        warn(
          id,
          `${name} mapping`,
          `TARGETS.${name}.PATH_MAPPINGS key '${key}' is in no library of ${name}: folders mapped there are skipped by ${name}.`,
          `The key is the folder as ${name} sees it: use one of its library folders (${known}), with the primary Plex's form of it in the list.`,
        ),
      );
    }
  }
  const mapper = createPathMapper({ mappings: probe.mappings });
  const primary = findings.sections?.flatMap((section) => section.locations);
  for (const folder of folders) {
    const id = `target:${name}.library:${folder.path}`;
    const title = `${name} library`;
    const byKey = keys.find((key) => contains(key, folder.path) || contains(folder.path, key));
    if (byKey !== undefined) {
      out.push(ok(id, title, `'${folder.path}' (${folder.library}) is reached through the mapping '${byKey}'.`));
      continue;
    }
    if (!primary) {
      out.push(skip(id, title, `No mapping reaches '${folder.path}' (${folder.library}); whether a primary Plex folder does needs Plex's library list: ${findings.sectionsUnknown ?? "Plex was not asked."}`));
      continue;
    }
    const from = primary.find((location) => {
      const mapped = mapper.toServer(location).path;
      return contains(mapped, folder.path) || contains(folder.path, mapped);
    });
    out.push(
      from !== undefined
        ? ok(id, title, `'${folder.path}' (${folder.library}) is reached from the primary Plex's '${from}'${keys.length === 0 ? " (no PATH_MAPPINGS: the same path)" : ""}.`)
        : warn(
            id,
            title,
            `No folder of the primary Plex reaches '${folder.path}' (${folder.library}) on ${name}: scans there never go to ${kind}.`,
            `If ${name} sees one of Plex's folders at '${folder.path}', add "${withTrailingSlash(folder.path)}": ["<that folder as the primary Plex sees it>/"] to TARGETS.${name}.PATH_MAPPINGS.`,
          ),
    );
  }
  return out;
}

/** `outer` is `inner` or holds it, on whole segments (Windows folders without regard to case). */
function contains(outer: string, inner: string): boolean {
  const fold = isWindowsPath(outer) || isWindowsPath(inner);
  const a = withTrailingSlash(normalizePath(outer));
  const b = withTrailingSlash(normalizePath(inner));
  return fold ? b.toLowerCase().startsWith(a.toLowerCase()) : b.startsWith(a);
}

export function unique(values: readonly string[]): string[] {
  return [...new Set(values)];
}
