import { describe, expect, it } from "vitest";
import { nearestForm, unroutableReason } from "./unroutable.ts";

describe("the form nearest to an unmapped path", () => {
  const forms = ["/data/TV/", "/media/TV/", "/media/Movies/", "My Drive/Media/TV/"];
  it.each([
    ["/media/tv/Severance/Season 02", "/media/TV/"],
    ["/media/Movie/Heat (1995)", "/media/Movies/"],
    ["/data/Television/Show", "/data/TV/"],
    ["My Drive/Media/Tv/Show", "My Drive/Media/TV/"],
  ])("%s → %s", (path, nearest) => {
    expect(nearestForm(path, forms)).toBe(nearest);
  });

  it("names none when no form shares even the first folder", () => {
    expect(nearestForm("/srv/films/Heat", forms)).toBeUndefined();
  });

  it("says what differs and where to fix it", () => {
    const verdict = unroutableReason("/media/tv/Show/S01/e.mkv", "/media/tv/Show/S01/e.mkv", { "/data/TV/": ["/media/TV/"] });
    expect(verdict).toEqual({
      reason: "Not queued: '/media/tv/Show/S01/e.mkv' matches no SERVER_PATH_MAPPINGS form and lies in no library (nearest form: '/media/TV/').",
      fix: "Correct the path or the form '/media/TV/' in SERVER_PATH_MAPPINGS (they differ at 'tv'), or add this path's form under the folder the media server uses; autoscan sections lists its library folders.",
      nearest: "/media/TV/",
    });
    expect(unroutableReason("/x/y.mkv", "/x/y.mkv", {}).reason).toBe(
      "Not queued: no library of the media server holds '/x/y.mkv', and SERVER_PATH_MAPPINGS is empty.",
    );
  });
});
