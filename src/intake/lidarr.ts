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
 * Lidarr webhooks (integrations.md §6.4). Track files carry an absolute `path` and no `relativePath`.
 *
 * - `Download`: every `trackFiles[]` entry plus the upgrade's `deletedFiles[]` (plex_autoscan #89/#127: the field is
 *   the plural `trackFiles`).
 * - `Rename`: the files of `renamedTrackFiles[]` at their new places (their items refreshed in place after the scan)
 *   and at their old ones (deleted), then their folders, old and new; without the list, the artist folder.
 * - `Retag`: the retagged file (its tags changed, so Plex must re-read it).
 * - `TrackFileDelete`: the deleted file(s). `AlbumDelete`: the artist folder (an album carries no path).
 *   `ArtistDelete`: the artist folder.
 * Cloudbox/autoscan answered 400 to every event but Download, which made Lidarr disable the connection (#214).
 */
const NAME = "Lidarr";
const FOLDER = "artist.path";

const payload = v.looseObject({
  artist: v.nullish(v.looseObject({ path: v.nullish(absolutePath) }, "must be an object")),
  trackFiles: v.nullish(fileList(arrFile)),
  trackFile: v.nullish(arrFile),
  renamedTrackFiles: v.nullish(fileList(renamedFile)),
  ...commonFields,
});
type Payload = v.InferOutput<typeof payload>;

export const lidarr: ArrApp = {
  name: NAME,
  noun: "album track",
  scanEvents: new Set(["Download", "Rename", "Retag", "TrackFileDelete", "AlbumDelete", "ArtistDelete"]),
  matchKeys: ["artist", "trackFiles", "trackFile", "renamedTrackFiles", "tracks"],
  parse(body, event) {
    const read = readPayload(payload, body, NAME, event);
    return read.ok ? toParse(NAME, event, pathsFor(read.value, event)) : read.failure;
  },
};

function pathsFor(body: Payload, event: string): PathsOrReason {
  const folder = body.artist?.path;
  switch (event) {
    case "Download":
      return combine(
        body.trackFiles ? filePaths(folder, body.trackFiles, "trackFiles", FOLDER) : "missing 'trackFiles'",
        upgradeDeletions(folder, body.deletedFiles, FOLDER),
      );
    case "Rename":
      return body.renamedTrackFiles?.length
        ? renamedPaths(folder, body.renamedTrackFiles, "renamedTrackFiles", FOLDER)
        : folderPath(folder, FOLDER);
    case "Retag":
      return body.trackFiles?.length && !body.trackFile
        ? filePaths(folder, body.trackFiles, "trackFiles", FOLDER)
        : filePath(folder, body.trackFile, "trackFile", FOLDER);
    case "TrackFileDelete":
      return body.trackFiles?.length && !body.trackFile
        ? filePaths(folder, body.trackFiles, "trackFiles", FOLDER, true)
        : filePath(folder, body.trackFile, "trackFile", FOLDER, true);
    case "AlbumDelete":
    case "ArtistDelete":
      return folderPath(folder, FOLDER, true);
    default:
      return [];
  }
}
