import * as v from "valibot";
import {
  absolutePath,
  arrFile,
  combine,
  commonFields,
  fileList,
  filePath,
  filePaths,
  folderPath,
  renamedFile,
  renamedPaths,
  readPayload,
  toParse,
  upgradeDeletions,
  type ArrApp,
  type PathsOrReason,
} from "./received-paths.ts";

/**
 * Sonarr webhooks (v3 and v4; integrations.md §6.2). Paths come from `series.path` + `episodeFile.relativePath`, as
 * plex_autoscan joined them, else from the file's absolute `path`.
 *
 * - `Download`: `episodeFile`, or `episodeFiles[]` from v4.0.6's "On Import Complete" (Cloudbox/autoscan answers 400
 *   to that shape), plus every `deletedFiles[]` entry of an upgrade.
 * - `Rename`: the files of `renamedEpisodeFiles[]` at their new places (their items refreshed in place after the scan)
 *   and at their old ones (deleted), then their folders, old and new; without the list, the series folder.
 * - `EpisodeFileDelete`: the deleted file (the dispatcher scans its folder), or Sportarr's `deletedFiles[]`.
 *   `SeriesDelete`: the series folder (Sportarr sends none: the event is answered 200 and logged, nothing to scan).
 */
const NAME = "Sonarr";
const FOLDER = "series.path";

const payload = v.looseObject({
  series: v.nullish(v.looseObject({ path: v.nullish(absolutePath) }, "must be an object")),
  episodeFile: v.nullish(arrFile),
  episodeFiles: v.nullish(fileList(arrFile)),
  renamedEpisodeFiles: v.nullish(fileList(renamedFile)),
  ...commonFields,
});
type Payload = v.InferOutput<typeof payload>;

export const sonarr: ArrApp = {
  name: NAME,
  noun: "series",
  scanEvents: new Set(["Download", "Rename", "EpisodeFileDelete", "SeriesDelete"]),
  matchKeys: ["series", "episodeFile", "episodeFiles", "renamedEpisodeFiles", "episodes"],
  parse(body, event) {
    const read = readPayload(payload, body, NAME, event);
    return read.ok ? toParse(NAME, event, pathsFor(read.value, event)) : read.failure;
  },
};

function pathsFor(body: Payload, event: string): PathsOrReason {
  const folder = body.series?.path;
  switch (event) {
    case "Download": {
      const imported = body.episodeFile
        ? filePath(folder, body.episodeFile, "episodeFile", FOLDER)
        : body.episodeFiles
          ? filePaths(folder, body.episodeFiles, "episodeFiles", FOLDER)
          : "missing 'episodeFile' (or v4's 'episodeFiles')";
      return combine(imported, upgradeDeletions(folder, body.deletedFiles, FOLDER));
    }
    case "Rename":
      return body.renamedEpisodeFiles?.length
        ? renamedPaths(folder, body.renamedEpisodeFiles, "renamedEpisodeFiles", FOLDER)
        : folderPath(folder, FOLDER);
    case "EpisodeFileDelete":
      // Sportarr (a Sonarr fork) lists the deleted files under `deletedFiles[]` and sends no `episodeFile`.
      return !body.episodeFile && Array.isArray(body.deletedFiles)
        ? filePaths(folder, body.deletedFiles, "deletedFiles", FOLDER, true)
        : filePath(folder, body.episodeFile, "episodeFile", FOLDER, true);
    case "SeriesDelete":
      return folderPath(folder, FOLDER, true);
    default:
      return [];
  }
}
