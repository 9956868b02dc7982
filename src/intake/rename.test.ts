import { describe, expect, it } from "vitest";
import type { ScanRequest } from "../core/scan.ts";
import { createPathMapper } from "../paths/mapping.ts";
import { parseWebhook } from "./webhook.ts";

/**
 * A Rename from each *arr app: the renamed files at their new places ask for a metadata refresh of their items (after
 * the folder's scan has landed), the files at their old places are named deleted (a route that scans paths drops
 * the stale item), and the folders are what they were before refresh in place: the old ones (deleted) when the files
 * left them, the new ones. Every file lies in one of those folders, so the folders' scans stay the only scans.
 */
const mapper = createPathMapper({ mappings: { "/data/": ["/media/"] } });

type Seen = Pick<ScanRequest, "path" | "kind"> & { deleted?: true; refresh?: string };

function rename(body: Record<string, unknown>): Seen[] {
  const outcome = parseWebhook({ eventType: "Rename", ...body }, { mapper });
  if (outcome.kind !== "scan") throw new Error(`not a scan: ${JSON.stringify(outcome)}`);
  expect(outcome.event).toBe("Rename");
  return outcome.requests.map((r) => ({
    path: r.path,
    kind: r.kind,
    ...(r.deleted ? { deleted: true as const } : {}),
    ...(r.refresh ? { refresh: r.refresh } : {}),
  }));
}

/** Each file the Rename names lies in a folder it also names: the files add no scan of their own. */
function expectFoldersCoverFiles(seen: readonly Seen[]): void {
  const folders = new Set(seen.filter((r) => r.kind === "folder").map((r) => r.path));
  for (const file of seen.filter((r) => r.kind === "file")) expect(folders).toContain(file.path.replace(/\/[^/]+$/, ""));
}

describe("a Rename webhook asks a refresh of each renamed file's item", () => {
  it("Sonarr: renamedEpisodeFiles[] (relativePath under series.path); a rename inside its season folder scans that folder only", () => {
    const seen = rename({
      series: { id: 1, title: "Andor", path: "/media/TV/Andor" },
      renamedEpisodeFiles: [
        { id: 11, relativePath: "Season 01/Andor - S01E01 - Kassa.mkv", previousRelativePath: "Season 01/andor.s01e01.mkv" },
        { id: 12, relativePath: "Season 01/Andor - S01E02 - That Would Be Me.mkv", previousPath: "/media/TV/Andor/Season 01/andor.s01e02.mkv" },
      ],
    });
    expect(seen).toEqual([
      { path: "/data/TV/Andor/Season 01/Andor - S01E01 - Kassa.mkv", kind: "file", refresh: "metadata" },
      { path: "/data/TV/Andor/Season 01/Andor - S01E02 - That Would Be Me.mkv", kind: "file", refresh: "metadata" },
      { path: "/data/TV/Andor/Season 01/andor.s01e01.mkv", kind: "file", deleted: true },
      { path: "/data/TV/Andor/Season 01/andor.s01e02.mkv", kind: "file", deleted: true },
      { path: "/data/TV/Andor/Season 01", kind: "folder" },
    ]);
    expectFoldersCoverFiles(seen);
  });

  it("Radarr: renamedMovieFiles[] into a renamed movie folder; the old folder is scanned as deleted, as before", () => {
    const seen = rename({
      movie: { id: 2, title: "Arrival", folderPath: "/media/Movies/Arrival (2016) {tmdb-329865}" },
      renamedMovieFiles: [
        {
          id: 21,
          relativePath: "Arrival (2016) {tmdb-329865}.mkv",
          path: "/media/Movies/Arrival (2016) {tmdb-329865}/Arrival (2016) {tmdb-329865}.mkv",
          previousPath: "/media/Movies/Arrival (2016)/Arrival.2016.mkv",
        },
      ],
    });
    expect(seen).toEqual([
      { path: "/data/Movies/Arrival (2016) {tmdb-329865}/Arrival (2016) {tmdb-329865}.mkv", kind: "file", refresh: "metadata" },
      { path: "/data/Movies/Arrival (2016)/Arrival.2016.mkv", kind: "file", deleted: true },
      { path: "/data/Movies/Arrival (2016)", kind: "folder", deleted: true },
      { path: "/data/Movies/Arrival (2016) {tmdb-329865}", kind: "folder" },
    ]);
    expectFoldersCoverFiles(seen);
  });

  it("Lidarr: renamedTrackFiles[] (absolute paths) across two album folders", () => {
    const seen = rename({
      artist: { id: 3, name: "Nils Frahm", path: "/media/Music/Nils Frahm" },
      renamedTrackFiles: [
        { id: 31, path: "/media/Music/Nils Frahm/Spaces (2013)/01 - An Aborted Beginning.flac", previousPath: "/media/Music/Nils Frahm/Spaces (2013)/01 An Aborted Beginning.flac" },
        { id: 32, path: "/media/Music/Nils Frahm/Felt (2011)/01 - Keep.flac", previousPath: "/media/Music/Nils Frahm/Felt (2011)/01 Keep.flac" },
      ],
    });
    expect(seen).toEqual([
      { path: "/data/Music/Nils Frahm/Spaces (2013)/01 - An Aborted Beginning.flac", kind: "file", refresh: "metadata" },
      { path: "/data/Music/Nils Frahm/Felt (2011)/01 - Keep.flac", kind: "file", refresh: "metadata" },
      { path: "/data/Music/Nils Frahm/Spaces (2013)/01 An Aborted Beginning.flac", kind: "file", deleted: true },
      { path: "/data/Music/Nils Frahm/Felt (2011)/01 Keep.flac", kind: "file", deleted: true },
      { path: "/data/Music/Nils Frahm/Spaces (2013)", kind: "folder" },
      { path: "/data/Music/Nils Frahm/Felt (2011)", kind: "folder" },
    ]);
    expectFoldersCoverFiles(seen);
  });

  it("Readarr: renamedBookFiles[]; an entry without its previous path names its new place only", () => {
    const seen = rename({
      author: { id: 4, name: "Ursula K. Le Guin", path: "/media/Books/Ursula K. Le Guin" },
      renamedBookFiles: [{ id: 41, path: "/media/Books/Ursula K. Le Guin/The Lathe of Heaven (1971)/The Lathe of Heaven.epub" }],
    });
    expect(seen).toEqual([
      { path: "/data/Books/Ursula K. Le Guin/The Lathe of Heaven (1971)/The Lathe of Heaven.epub", kind: "file", refresh: "metadata" },
      { path: "/data/Books/Ursula K. Le Guin/The Lathe of Heaven (1971)", kind: "folder" },
    ]);
  });

  it("a Rename without its file list (older apps, Sportarr) scans the series folder as before and asks no refresh: a folder names no item", () => {
    expect(rename({ series: { id: 5, title: "Premier League", path: "/media/TV/Premier League" }, renamedCount: 3 })).toEqual([
      { path: "/data/TV/Premier League", kind: "folder" },
    ]);
    expect(rename({ movie: { id: 6, folderPath: "/media/Movies/Deadpool (2016)" }, renamedMovieFiles: [] })).toEqual([
      { path: "/data/Movies/Deadpool (2016)", kind: "folder" },
    ]);
  });

  it("a renamed entry that names no new place is refused with the field, as before", () => {
    const outcome = parseWebhook(
      { eventType: "Rename", series: { path: "/media/TV/Andor" }, renamedEpisodeFiles: [{ id: 1, previousPath: "/media/TV/Andor/a.mkv" }] },
      { mapper },
    );
    expect(outcome).toMatchObject({ kind: "unusable", reason: "Sonarr Rename payload: missing 'renamedEpisodeFiles[0].path' or 'renamedEpisodeFiles[0].relativePath'" });
  });

  it("only Upgrade, Rename and Retag ask a refresh: a plain import and a file deletion are scanned only", () => {
    const download = parseWebhook(
      { eventType: "Download", series: { path: "/media/TV/Andor" }, episodeFile: { relativePath: "Season 01/a.mkv" } },
      { mapper },
    );
    const deleted = parseWebhook({ eventType: "EpisodeFileDelete", series: { path: "/media/TV/Andor" }, episodeFile: { relativePath: "Season 01/a.mkv" } }, { mapper });
    for (const outcome of [download, deleted]) {
      expect(outcome.kind).toBe("scan");
      expect(outcome.kind === "scan" && outcome.requests.every((r) => r.refresh === undefined)).toBe(true);
    }
  });

  it("a Lidarr/Readarr Retag (tags rewritten in the same file) asks the retagged file's metadata again", () => {
    const retag = parseWebhook({ eventType: "Retag", artist: { path: "/media/Music/A" }, trackFile: { path: "/media/Music/A/B/01.flac" } }, { mapper });
    expect(retag.kind).toBe("scan");
    const files = retag.kind === "scan" ? retag.requests.filter((r) => r.kind === "file") : [];
    expect(files.length).toBeGreaterThan(0);
    expect(files.every((r) => r.refresh === "metadata")).toBe(true);
  });
});
