import { describe, expect, it } from "vitest";
import { eventLabel, nameLabel, sourceLabel, statusClass } from "./labels.ts";

describe("metric labels stay within fixed sets", () => {
  it.each([
    ["Sonarr", "sonarr"],
    ["Sonarr (4k)", "sonarr"],
    ["Radarr (anything a URL says)", "radarr"],
    ["Lidarr", "lidarr"],
    ["Readarr", "readarr"],
    ["Manual", "manual"],
    ["Manual (label)", "manual"],
    ["Google Drive", "drive"],
    ["trigger", "trigger"],
    ["api", "api"],
    ["Unknown app (x)", "unknown"],
    ["Sonarrish", "other"],
    ["/data/TV/Show", "other"],
  ])("source %j → %s", (source, label) => expect(sourceLabel(source)).toBe(label));

  it("keeps the events the apps send and our own words, and folds the rest into other", () => {
    for (const event of ["Download", "Upgrade", "Rename", "Test", "Manual", "Grab", "TrackFileDelete", "queue_count", "invalid", "none"]) {
      expect(eventLabel(event)).toBe(event);
    }
    expect(eventLabel("SomethingNew")).toBe("other");
    expect(eventLabel("/data/TV")).toBe("other");
  });

  it("answers by status class, names as they are when plain", () => {
    expect([200, 400, 404, 503].map(statusClass)).toEqual(["2xx", "4xx", "4xx", "5xx"]);
    expect(statusClass(0)).toBe("other");
    expect(nameLabel("plex-scanner")).toBe("plex-scanner");
    expect(nameLabel("a name with spaces")).toBe("other");
  });
});
