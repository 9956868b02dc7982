import { describe, expect, it } from "vitest";
import { createDriveFilter, type DriveFilterOptions } from "./filters.ts";

const base: DriveFilterOptions = { filePaths: ["My Drive/Media/"], fileExtensions: false, fileExtensionsList: [], mimeTypes: false, mimeTypesList: [] };

describe("CLOUD.ALLOWED filters", () => {
  it("FILE_PATHS are case-insensitive prefixes and always applied (empty = nothing passes)", () => {
    expect(createDriveFilter(base)("my drive/MEDIA/x.mkv", "video/x-matroska").pass).toBe(true);
    expect(createDriveFilter(base)("My Drive/Other/x.mkv", "video/x-matroska")).toEqual({ pass: false, reason: "not under CLOUD.ALLOWED.FILE_PATHS" });
    expect(createDriveFilter({ ...base, filePaths: [] })("My Drive/Media/x.mkv", undefined).pass).toBe(false);
  });

  it("extensions apply only when FILE_EXTENSIONS is true; with or without the dot", () => {
    const filter = createDriveFilter({ ...base, fileExtensions: true, fileExtensionsList: ["mkv", ".MP4"] });
    expect(filter("My Drive/Media/a.MKV", undefined).pass).toBe(true);
    expect(filter("My Drive/Media/a.mp4", undefined).pass).toBe(true);
    expect(filter("My Drive/Media/a.nfo", undefined).pass).toBe(false);
    expect(filter("My Drive/Media/amkv", undefined).pass).toBe(false);
    expect(createDriveFilter({ ...base, fileExtensionsList: ["mkv"] })("My Drive/Media/a.nfo", undefined).pass).toBe(true);
  });

  it("MIME prefixes apply only when MIME_TYPES is true; video-typed .sub files are refused", () => {
    const filter = createDriveFilter({ ...base, mimeTypes: true, mimeTypesList: ["video"] });
    expect(filter("My Drive/Media/a.mkv", "video/x-matroska").pass).toBe(true);
    expect(filter("My Drive/Media/a.srt", "text/plain").pass).toBe(false);
    expect(filter("My Drive/Media/a.sub", "video/mpeg").pass).toBe(false);
    expect(filter("My Drive/Media/a.mkv", undefined).pass).toBe(false);
    expect(createDriveFilter({ ...base, mimeTypesList: ["video"] })("My Drive/Media/a.srt", "text/plain").pass).toBe(true);
  });
});
