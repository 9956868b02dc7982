import { describe, expect, it } from "vitest";
import { createPathMapper } from "../paths/mapping.ts";
import { parseManualPath, parseManualTrigger, parseRefreshParam, type ManualOptions } from "./manual.ts";

const options: ManualOptions = {
  mapper: createPathMapper({
    mappings: { "/data/Movies/": ["/mnt/unionfs/Movies/", "My Drive/Media/Movies/", "D:\\Movies\\"] },
  }),
  ignoreList: ["/.grab/", "Thumbs.db"],
  source: "Manual",
};

describe("parseManualPath", () => {
  it("maps any listed form to the server form and keeps what was sent", () => {
    for (const form of ["/mnt/unionfs/Movies/Heat (1995)", "My Drive/Media/Movies/Heat (1995)", "D:\\Movies\\Heat (1995)"]) {
      const parsed = parseManualPath(form, "unknown", options);
      expect(parsed).toMatchObject({
        ok: true,
        request: { path: "/data/Movies/Heat (1995)", kind: "unknown", source: "Manual", event: "Manual", receivedPath: form },
      });
    }
  });

  it("passes an unmapped absolute path unchanged, and says so", () => {
    const parsed = parseManualPath("  /srv/other/x.mkv\n", "unknown", options);
    expect(parsed).toEqual({
      ok: true,
      request: { path: "/srv/other/x.mkv", kind: "unknown", source: "Manual", event: "Manual", receivedPath: "/srv/other/x.mkv" },
    });
  });

  it("reports the SERVER_IGNORE_LIST entry that matched the mapped path", () => {
    const parsed = parseManualPath("/mnt/unionfs/Movies/.grab/x.mkv", "unknown", options);
    expect(parsed).toMatchObject({ ok: true, ignoredBy: "/.grab/" });
    expect(parseManualPath("/data/Movies/thumbs.DB", "unknown", options)).toMatchObject({ ignoredBy: "Thumbs.db" });
  });

  it.each([
    [undefined, "missing 'filepath'"],
    ["", "missing 'filepath'"],
    [42, "'filepath' must be text"],
    ["Movies/Heat (1995)", "must be an absolute path or start with a SERVER_PATH_MAPPINGS form"],
    ["/data/Movies/../../etc/passwd", "must not contain '..' segments"],
    ["/data/Movies/a\u0000b", "must not contain NUL or other control characters"],
    ["/" + "a".repeat(5000), "must be at most 4096 characters"],
  ])("refuses %j", (raw, reason) => {
    const parsed = parseManualPath(raw, "unknown", options);
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.reason).toContain(reason);
  });
});

describe("parseManualTrigger", () => {
  it("turns dirs into folders (trailing slash dropped) and paths into unknowns", () => {
    const parsed = parseManualTrigger(
      { dirs: ["/mnt/unionfs/Movies/Interstellar (2014)/", "/data/Movies/Parasite (2019)"], paths: ["/data/Movies/Heat (1995)/Heat.mkv"] },
      options,
    );
    expect(parsed).toEqual({
      ok: true,
      ignored: [],
      accepted: [
        expect.objectContaining({ path: "/data/Movies/Interstellar (2014)", kind: "folder" }),
        expect.objectContaining({ path: "/data/Movies/Parasite (2019)", kind: "folder" }),
        expect.objectContaining({ path: "/data/Movies/Heat (1995)/Heat.mkv", kind: "unknown" }),
      ],
    });
  });

  it("needs at least one dir or path, and refuses the whole call for one bad value", () => {
    expect(parseManualTrigger({ dirs: [], paths: [] }, options)).toEqual({ ok: false, reason: "no 'dir' or 'path' parameter given" });
    const parsed = parseManualTrigger({ dirs: ["/data/Movies/A", "relative"], paths: [] }, options);
    expect(parsed).toMatchObject({ ok: false, reason: expect.stringContaining("'dir'") as unknown });
  });

  it("lists ignored paths apart", () => {
    const parsed = parseManualTrigger({ dirs: ["/data/Movies/.grab/x"], paths: [] }, options);
    expect(parsed).toMatchObject({ ok: true, accepted: [], ignored: [{ path: "/data/Movies/.grab/x", ignoredBy: "/.grab/" }] });
  });
});

describe("refresh=", () => {
  it.each([
    [undefined, undefined],
    ["", undefined],
    ["0", undefined],
    ["false", undefined],
    ["1", "file"],
    ["true", "file"],
    [" ON ", "file"],
    [true, "file"],
    [1, "file"],
    ["metadata", "metadata"],
  ])("%j asks %j", (raw, wish) => {
    expect(parseRefreshParam(raw)).toEqual({ ok: true, ...(wish ? { wish } : {}) });
  });

  it("refuses a value it does not know, saying what it takes", () => {
    expect(parseRefreshParam("please")).toEqual({ ok: false, reason: "'refresh' must be 1 (re-read the file: metadata and streams), metadata, or 0; got 'please'" });
  });

  it("is carried by every path of a trigger call, and a bad value refuses the call", () => {
    const parsed = parseManualTrigger({ dirs: [], paths: ["/data/Movies/Heat (1995)/Heat.mkv"], refresh: "1" }, options);
    expect(parsed.ok && parsed.accepted.map((r) => r.refresh)).toEqual(["file"]);
    expect(parseManualTrigger({ dirs: [], paths: ["/data/Movies/x.mkv"], refresh: "2" }, options).ok).toBe(false);
  });
});
