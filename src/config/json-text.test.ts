import { describe, expect, it } from "vitest";
import { ConfigError } from "../core/errors.ts";
import { lineAndColumn, parseJsonText } from "./json-text.ts";

describe("lineAndColumn", () => {
  const text = "ab\ncd\n\nef";
  it.each([
    [0, 1, 1],
    [1, 1, 2],
    [3, 2, 1],
    [4, 2, 2],
    [6, 3, 1],
    [7, 4, 1],
    [8, 4, 2],
  ])("offset %i is line %i, column %i", (offset, line, column) => {
    expect(lineAndColumn(text, offset)).toEqual({ line, column });
  });
});

describe("parseJsonText", () => {
  it("parses JSON, tolerating a byte order mark", () => {
    expect(parseJsonText('\uFEFF{"a": [1, "x"]}', "c.json")).toEqual({ a: [1, "x"] });
  });

  it("throws a ConfigError naming the file, line and column, with a hint", () => {
    const error = (() => {
      try {
        parseJsonText('{\n  "a": 1,\n  "b": 2,\n}', "/cfg/config.json");
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toMatch(/^\/cfg\/config\.json is not valid JSON at line 4, column 1: /);
    expect((error as ConfigError).problems.join("\n")).toMatch(/trailing comma/);
  });

  it("counts columns on the line of the error after a byte order mark", () => {
    expect(() => parseJsonText('\uFEFF{\n  "a": 1,\n}', "c.json")).toThrow(/line 3, column 1/);
  });

  it("reports the position of an unexpected word (True, None, unquoted text)", () => {
    expect(() => parseJsonText('{\n  "USE_SUDO": False\n}', "c.json")).toThrow(/line 2, column 15/);
  });

  it("reports the end of a cut-off file", () => {
    expect(() => parseJsonText('{\n  "a": [1, 2', "c.json")).toThrow(/line 2, column 13/);
  });

  it("reports an empty file plainly", () => {
    expect(() => parseJsonText("", "c.json")).toThrow(ConfigError);
    expect(() => parseJsonText("", "c.json")).toThrow(/c\.json/);
  });
});
