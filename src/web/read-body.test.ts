import { describe, expect, it } from "vitest";
import { MAX_JSON_DEPTH, jsonDepthExceeds, mediaType } from "./read-body.ts";

describe("jsonDepthExceeds", () => {
  const nested = (depth: number): unknown => JSON.parse("[".repeat(depth) + "]".repeat(depth));

  it("allows exactly the limit and refuses one more, for arrays and objects", () => {
    expect(jsonDepthExceeds(nested(MAX_JSON_DEPTH), MAX_JSON_DEPTH)).toBe(false);
    expect(jsonDepthExceeds(nested(MAX_JSON_DEPTH + 1), MAX_JSON_DEPTH)).toBe(true);
    const objects = JSON.parse(`${'{"a":'.repeat(3)}1${"}".repeat(3)}`) as unknown;
    expect(jsonDepthExceeds(objects, 3)).toBe(false);
    expect(jsonDepthExceeds(objects, 2)).toBe(true);
  });

  it("walks 100,000 levels without a stack overflow, and ignores scalars", () => {
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = { a: deep };
    expect(jsonDepthExceeds(deep, MAX_JSON_DEPTH)).toBe(true);
    expect(jsonDepthExceeds("x", 0)).toBe(false);
    expect(jsonDepthExceeds(null, 0)).toBe(false);
  });
});

describe("mediaType", () => {
  it("takes the type without parameters, lower-cased", () => {
    expect(mediaType("Application/JSON; charset=utf-8")).toBe("application/json");
    expect(mediaType(undefined)).toBe("");
    expect(mediaType(" multipart/form-data ; boundary=x")).toBe("multipart/form-data");
  });
});
