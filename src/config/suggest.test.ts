import { describe, expect, it } from "vitest";
import { editDistance, suggestKey } from "./suggest.ts";

describe("editDistance", () => {
  it.each([
    ["", "", 0],
    ["abc", "", 3],
    ["kitten", "sitting", 3],
    ["SERVER_PATH_MAPPING", "SERVER_PATH_MAPPINGS", 1],
    ["FILE_PATHS", "FILE_PATHS", 0],
  ])("%j → %j is %i", (a, b, distance) => {
    expect(editDistance(a, b)).toBe(distance);
    expect(editDistance(b, a)).toBe(distance);
  });
});

describe("suggestKey", () => {
  const known = ["SERVER_PATH_MAPPINGS", "SERVER_FILE_EXIST_PATH_MAPPINGS", "SERVER_PORT", "SERVER_PASS", "USE_DOCKER"];

  it("names the nearest known key", () => {
    expect(suggestKey("SERVER_PATH_MAPPING", known)).toBe("SERVER_PATH_MAPPINGS");
    expect(suggestKey("SERVER_PROT", known)).toBe("SERVER_PORT");
    expect(suggestKey("USE_DOCKR", known)).toBe("USE_DOCKER");
  });

  it("ignores case, and answers with the key as it is spelt", () => {
    expect(suggestKey("use_docker", known)).toBe("USE_DOCKER");
  });

  it("says nothing when no key is close", () => {
    expect(suggestKey("XYZZY", known)).toBeUndefined();
    expect(suggestKey("PLEX_TOKEN", known)).toBeUndefined();
    expect(suggestKey("ANYTHING", [])).toBeUndefined();
  });
});
