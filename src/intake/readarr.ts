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
 * Readarr webhooks (integrations.md §6.5; the project's last commit is 2024-03, but installs remain).
 *
 * - `Download`: every `bookFiles[]` entry plus the upgrade's `deletedFiles[]`.
 * - `Rename`: the files of `renamedBookFiles[]` at their new places (their items refreshed in place after the scan)
 *   and at their old ones (deleted), then their folders, old and new; without the list, the author folder.
 * - `Retag`: the retagged file. `BookFileDelete`: the deleted file.
 * - `BookDelete`: the author folder (a book carries no path). `AuthorDelete`: the author folder.
 */
const NAME = "Readarr";
const FOLDER = "author.path";

const payload = v.looseObject({
  author: v.nullish(v.looseObject({ path: v.nullish(absolutePath) }, "must be an object")),
  bookFiles: v.nullish(fileList(arrFile)),
  bookFile: v.nullish(arrFile),
  renamedBookFiles: v.nullish(fileList(renamedFile)),
  ...commonFields,
});
type Payload = v.InferOutput<typeof payload>;

export const readarr: ArrApp = {
  name: NAME,
  noun: "book",
  scanEvents: new Set(["Download", "Rename", "Retag", "BookFileDelete", "BookDelete", "AuthorDelete"]),
  matchKeys: ["author", "bookFiles", "bookFile", "renamedBookFiles", "book"],
  parse(body, event) {
    const read = readPayload(payload, body, NAME, event);
    return read.ok ? toParse(NAME, event, pathsFor(read.value, event)) : read.failure;
  },
};

function pathsFor(body: Payload, event: string): PathsOrReason {
  const folder = body.author?.path;
  switch (event) {
    case "Download":
      return combine(
        body.bookFiles ? filePaths(folder, body.bookFiles, "bookFiles", FOLDER) : "missing 'bookFiles'",
        upgradeDeletions(folder, body.deletedFiles, FOLDER),
      );
    case "Rename":
      return body.renamedBookFiles?.length
        ? renamedPaths(folder, body.renamedBookFiles, "renamedBookFiles", FOLDER)
        : folderPath(folder, FOLDER);
    case "Retag":
      return filePath(folder, body.bookFile, "bookFile", FOLDER);
    case "BookFileDelete":
      return filePath(folder, body.bookFile, "bookFile", FOLDER, true);
    case "BookDelete":
    case "AuthorDelete":
      return folderPath(folder, FOLDER, true);
    default:
      return [];
  }
}
