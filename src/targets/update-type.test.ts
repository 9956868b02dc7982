import { describe, expect, it } from "vitest";
import { embyUpdateTypeOf, updateTypeOf } from "./update-type.ts";

const download = { source: "Sonarr", event: "Download", path: "/tv/a.mkv" };
const upgrade = { source: "Sonarr", event: "Upgrade", path: "/tv/a.mkv" };
const deleted = { source: "Sonarr", event: "EpisodeFileDelete", path: "/tv/b.mkv", deleted: true };
const manual = { source: "Manual", event: "Manual", path: "/tv" };

describe("UpdateType of a folder's requests", () => {
  it.each([
    [[download], "Created", "Created"],
    [[download, download], "Created", "Created"],
    [[upgrade], "Modified", "Created"],
    [[deleted], "Deleted", "Deleted"],
    [[deleted, download], "Modified", "Created"],
    [[manual], "Modified", "Created"],
    [[], "Modified", "Created"],
  ] as const)("%j → Jellyfin %s, Emby %s", (sources, jellyfin, emby) => {
    expect(updateTypeOf(sources)).toBe(jellyfin);
    expect(embyUpdateTypeOf(sources)).toBe(emby);
  });
});
