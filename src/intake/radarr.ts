import * as v from "valibot";
import {
  absolutePath,
  arrFile,
  combine,
  commonFields,
  fileList,
  filePath,
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
 * Radarr webhooks (integrations.md §6.3). `movie.folderPath` + `movieFile.relativePath`, else `movieFile.path`.
 *
 * - `Download`: the movie file plus every `deletedFiles[]` entry of an upgrade.
 * - `Rename`: the files of `renamedMovieFiles[]` at their new places (their items refreshed in place after the scan)
 *   and at their old ones (deleted), then their folders, old and new; without the list, the movie folder.
 * - `MovieFileDelete`: the deleted file. `MovieDelete`: the movie folder.
 */
const NAME = "Radarr";
const FOLDER = "movie.folderPath";

const payload = v.looseObject({
  movie: v.nullish(v.looseObject({ folderPath: v.nullish(absolutePath) }, "must be an object")),
  movieFile: v.nullish(arrFile),
  renamedMovieFiles: v.nullish(fileList(renamedFile)),
  ...commonFields,
});
type Payload = v.InferOutput<typeof payload>;

export const radarr: ArrApp = {
  name: NAME,
  noun: "movie",
  scanEvents: new Set(["Download", "Rename", "MovieFileDelete", "MovieDelete"]),
  matchKeys: ["movie", "movieFile", "renamedMovieFiles", "remoteMovie"],
  parse(body, event) {
    const read = readPayload(payload, body, NAME, event);
    return read.ok ? toParse(NAME, event, pathsFor(read.value, event)) : read.failure;
  },
};

function pathsFor(body: Payload, event: string): PathsOrReason {
  const folder = body.movie?.folderPath;
  switch (event) {
    case "Download":
      return combine(filePath(folder, body.movieFile, "movieFile", FOLDER), upgradeDeletions(folder, body.deletedFiles, FOLDER));
    case "Rename":
      return body.renamedMovieFiles?.length
        ? renamedPaths(folder, body.renamedMovieFiles, "renamedMovieFiles", FOLDER)
        : folderPath(folder, FOLDER);
    case "MovieFileDelete":
      return filePath(folder, body.movieFile, "movieFile", FOLDER, true);
    case "MovieDelete":
      return folderPath(folder, FOLDER, true);
    default:
      return [];
  }
}
