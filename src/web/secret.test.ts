import { describe, expect, it } from "vitest";
import { createUrlSecret, safeEqual } from "./secret.ts";

describe("createUrlSecret", () => {
  const secret = createUrlSecret("9f2c4e1d8b7a6035");

  it("matches only the exact secret", () => {
    expect(secret.matches("9f2c4e1d8b7a6035")).toBe(true);
    for (const guess of [undefined, "", "9f2c4e1d8b7a603", "9f2c4e1d8b7a60355", "9f2c4e1d8b7a6036", "9F2C4E1D8B7A6035", "é".repeat(8)]) {
      expect(secret.matches(guess), String(guess)).toBe(false);
    }
  });

  it("does not match a guess that is the secret plus trailing zero bytes", () => {
    expect(secret.matches("9f2c4e1d8b7a6035\u0000")).toBe(false);
    expect(createUrlSecret("ab\u0000").matches("ab")).toBe(false);
  });

  it("redacts the secret, raw and percent-encoded, from logged text", () => {
    const odd = createUrlSecret("pa ss");
    expect(odd.redact("/pa ss/x and /pa%20ss/y")).toBe("/<SERVER_PASS>/x and /<SERVER_PASS>/y");
  });
});

describe("safeEqual", () => {
  it("compares strings of any length", () => {
    expect(safeEqual("user", "user")).toBe(true);
    expect(safeEqual("user", "user2")).toBe(false);
    expect(safeEqual("", "")).toBe(true);
  });
});
