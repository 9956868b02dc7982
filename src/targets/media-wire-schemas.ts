import * as v from "valibot";
import { MediaHttpError } from "./media-http.ts";
import type { LibraryFolder } from "./library-folders.ts";

/**
 * The Jellyfin and Emby library listings we read (integrations.md §4), validated before use and lenient about
 * fields we do not need (a library with no folders has `Locations: []` or, on some versions, null).
 */
const JellyfinVirtualFolders = v.array(
  v.looseObject({
    Name: v.nullish(v.string()),
    Locations: v.nullish(v.array(v.string())),
  }),
);

const EmbySelectableFolders = v.array(
  v.looseObject({
    Name: v.nullish(v.string()),
    SubFolders: v.nullish(v.array(v.looseObject({ Path: v.nullish(v.string()) }))),
  }),
);

/** `GET /Library/VirtualFolders` (Jellyfin): `[{Name, Locations: [path]}]`. */
export function parseJellyfinLibraries(body: string, what: string): LibraryFolder[] {
  const folders = parseBody(body, JellyfinVirtualFolders, what);
  return folders.flatMap((f) => (f.Locations ?? []).map((path) => ({ library: f.Name ?? "?", path })));
}

/** `GET /Library/SelectableMediaFolders` (Emby): `[{Name, SubFolders: [{Path}]}]`. */
export function parseEmbyLibraries(body: string, what: string): LibraryFolder[] {
  const folders = parseBody(body, EmbySelectableFolders, what);
  return folders.flatMap((f) =>
    (f.SubFolders ?? []).flatMap((sub) => (sub.Path ? [{ library: f.Name ?? "?", path: sub.Path }] : [])),
  );
}

function parseBody<S extends v.GenericSchema>(body: string, schema: S, what: string): v.InferOutput<S> {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    throw new MediaHttpError(`${what}: the answer is not JSON (is the URL right?)`, 200);
  }
  const result = v.safeParse(schema, json);
  if (!result.success) {
    const issue = result.issues[0];
    const where = issue ? v.getDotPath(issue) : undefined;
    throw new MediaHttpError(`${what}: unexpected answer${where ? ` at ${where}` : ""}: ${issue?.message ?? "invalid"}`, 200);
  }
  return result.output;
}
