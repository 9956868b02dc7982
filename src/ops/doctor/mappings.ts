import type { DiskEntry } from "../../paths/disk-probe.ts";
import type { LibraryFolder } from "../../targets/library-folders.ts";
import { createPathMapper, type PathMappings } from "../../paths/mapping.ts";
import { containment } from "../../paths/containment.ts";
import { normalizePath, withTrailingSlash } from "../../paths/normalize.ts";
import { fail, ok, skip, warn, type CheckResult, type DoctorSection, type Findings } from "./check.ts";

/**
 * SERVER_PATH_MAPPINGS against Plex's library folders:
 * - each key (the server form) must lie inside a library folder, or hold one: else scans mapped there reach no library;
 * - each library folder should be reached by some key (a path no form matches passes unchanged, so without any
 *   mapping at all, paths must already arrive in Plex's form);
 * - autoscan must see each library folder on its own disk (SERVER_FILE_EXIST_PATH_MAPPINGS, then the mapping's
 *   forms, as the file checks look), within a timeout: a hung mount is a warning, never a hang.
 * `stat` is the disk probe's look (`unanswered` when the disk does not answer within `timeoutSeconds`); in a container
 * the media arrive through docker-compose.yml's MEDIA_DIR volume.
 */
export interface MappingCheckOptions {
  readonly mappings: PathMappings;
  readonly existMappings: PathMappings;
  readonly stat: (localPath: string) => Promise<DiskEntry>;
  readonly timeoutSeconds: number;
  readonly inContainer: boolean;
}

/** Where docker-compose.yml mounts `${MEDIA_DIR}` (read-only) in the autoscan container, and Plex's beside it. */
const COMPOSE_MEDIA_MOUNT = "/data";

export async function mappingChecks(options: MappingCheckOptions, findings: Findings): Promise<CheckResult[]> {
  const sections = findings.sections;
  if (!sections) {
    const reason = `Needs Plex's library list: ${findings.sectionsUnknown ?? "Plex was not asked."}`;
    return [skip("mappings", "Mappings", reason), skip("disk", "Library on disk", reason)];
  }
  const folders = sections.flatMap((section) => section.locations.map((location) => ({ section, location })));
  const keys = Object.keys(options.mappings);
  const known = folders.map((f) => f.location).join(", ") || "(none)";
  const libraries = folders.map((f) => ({ library: f.section.title, path: f.location }));
  const out = keyChecks(keys, libraries, "", (key) => [`mapping:${key}`, "Mapping"], (key) =>
    fail(
      `mapping:${key}`,
      "Mapping",
      `SERVER_PATH_MAPPINGS key '${key}' is in no Plex library: scans mapped there are skipped by Plex.`,
      `The key is the folder as Plex sees it: use one of Plex's library folders (${known}; 'autoscan sections' lists them), and put '${key}' in its list of other forms if that is how your apps see it.`,
    ),
  );
  for (const { section, location } of folders) {
    const id = `library:${section.id}:${location}`;
    if (keys.length === 0) {
      out.push(ok(id, "Library mapping", `'${location}' (${section.title}): no SERVER_PATH_MAPPINGS, paths are sent as they arrive; fine when your apps see the same path.`));
      continue;
    }
    const reached = keys.some((key) => contains(key, location) || contains(location, key));
    out.push(
      reached
        ? ok(id, "Library mapping", `'${location}' (${section.title}) is reached by a mapping.`)
        : warn(
            id,
            "Library mapping",
            `No SERVER_PATH_MAPPINGS key reaches '${location}' (${section.title}): only paths that already arrive in that form reach it.`,
            `If your apps see it elsewhere, add "${withTrailingSlash(location)}": ["<the folder as they see it>/"] to SERVER_PATH_MAPPINGS.`,
          ),
    );
  }
  out.push(...(await diskChecks(options, folders)));
  return out;
}

async function diskChecks(options: MappingCheckOptions, folders: readonly { section: DoctorSection; location: string }[]): Promise<CheckResult[]> {
  const mapper = createPathMapper({ mappings: options.mappings, existMappings: options.existMappings });
  return Promise.all(
    folders.map(async ({ section, location }) => {
      const id = `disk:${section.id}:${location}`;
      const forms = mapper.localForms(location);
      const looks = await Promise.all(forms.map(async (form) => ({ form, entry: await options.stat(form) })));
      const seen = looks.find((look) => look.entry === "directory");
      if (seen) {
        const where = seen.form === location ? "at the same path" : `at '${seen.form}'`;
        return ok(id, "Library on disk", `autoscan sees '${location}' (${section.title}) ${where}.`);
      }
      const hung = looks.filter((look) => look.entry === "unanswered");
      if (hung.length > 0) {
        return warn(
          id,
          "Library on disk",
          `The disk did not answer a look at '${hung[0]?.form ?? location}' (${section.title}) within ${options.timeoutSeconds} s: a hung mount?`,
          "Check that mount (rclone, NFS, SMB) on autoscan's side; scans there wait until it answers.",
        );
      }
      const looked = forms.map((form) => `'${form}'`).join(", ");
      return fail(
        id,
        "Library on disk",
        `autoscan cannot see '${location}' (${section.title}): nothing at ${looked}. Scans there wait for files it never finds.`,
        options.inContainer ? containerMountFix(location) : hostMountFix(location),
      );
    }),
  );
}

/**
 * Each mapping key (the folder as the server sees it) against the server's library folders: lying in one or holding
 * one is fine (`'/data/TV/' is in library TV`, `owner` naming whose library), else `problem`. Shared with targets.ts.
 */
export function keyChecks(
  keys: readonly string[],
  folders: readonly LibraryFolder[],
  owner: string,
  at: (key: string) => [id: string, title: string],
  problem: (key: string) => CheckResult,
): CheckResult[] {
  return keys.map((key) => {
    const holding = unique(folders.filter((folder) => contains(folder.path, key)).map((folder) => folder.library));
    const held = unique(folders.filter((folder) => contains(key, folder.path)).map((folder) => folder.library));
    if (holding.length > 0) return ok(...at(key), `'${key}' is in ${owner}library ${holding.join(", ")}.`);
    if (held.length > 0) return ok(...at(key), `'${key}' holds ${owner}library ${held.join(", ")}.`);
    return problem(key);
  });
}

/** `outer` is `inner` or holds it, on whole segments (Windows folders without regard to case). */
export function contains(outer: string, inner: string): boolean {
  return containment(outer, normalizePath(inner)) >= 0;
}

/**
 * In a container the media come in through docker-compose.yml's `${MEDIA_DIR}:/data:ro` volume, and `.env` is read
 * only when the container is created: the fix is MEDIA_DIR and `docker compose up -d` (a `docker restart` keeps the
 * old volume). A library folder outside /data also needs the file-exist mapping from /data to Plex's form.
 */
function containerMountFix(location: string): string {
  const mount = COMPOSE_MEDIA_MOUNT;
  const how = `(docker-compose.yml mounts it at ${mount}, read-only)`;
  const apply = "run docker compose up -d (a docker restart does not read .env)";
  const normalized = normalizePath(location);
  if (contains(mount, normalized)) {
    const inside = normalized.slice(mount.length).replace(/^\/+|\/+$/g, "");
    const folder = inside === "" ? `the host folder Plex sees as ${mount}` : `the host folder that holds '${inside}'`;
    return `Set MEDIA_DIR in .env to ${folder} ${how}, then ${apply}.`;
  }
  return (
    `Set MEDIA_DIR in .env to the host folder with your media ${how} and ${apply}; then add ` +
    `{"${mount}/<where it lies under MEDIA_DIR>/": ["${withTrailingSlash(location)}"]} to SERVER_FILE_EXIST_PATH_MAPPINGS.`
  );
}

function hostMountFix(location: string): string {
  return (
    `Make it readable on this machine by the user autoscan runs as: mount it at '${location}' (rclone, NFS, SMB), or, ` +
    `if this machine sees it at another path, add {"<where autoscan sees it>/": ["${withTrailingSlash(location)}"]} to SERVER_FILE_EXIST_PATH_MAPPINGS.`
  );
}

/** A History row refused for lack of a mapping, as the API lists it (only what the count below reads). */
export interface RefusedRow {
  readonly requests?: readonly { readonly path: string; readonly receivedPath?: string; readonly source?: string }[];
}

/**
 * How many refused folders `mappings` (config.json's) reach now: one of their received paths falls under a form and
 * maps to another path than the one refused. A folder watcher's paths are local ones, not mapped so: not counted.
 * The same test the queue's "Retry the unmapped requests" makes with the mappings in force.
 */
export function refusedNowMapped(rows: readonly RefusedRow[], mappings: PathMappings): number {
  const mapper = createPathMapper({ mappings });
  return rows.filter((row) =>
    (row.requests ?? []).some((request) => {
      if (request.source?.startsWith("Watch (")) return false;
      const mapped = mapper.toServer(request.receivedPath ?? request.path);
      return mapped.known && mapped.path !== request.path;
    }),
  ).length;
}

export function unique(values: readonly string[]): string[] {
  return [...new Set(values)];
}
