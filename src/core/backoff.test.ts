import { describe, expect, it } from "vitest";
import { backoffDelay } from "./backoff.ts";

describe("backoffDelay", () => {
  it("starts at 5 s and doubles up to 5 min without jitter", () => {
    const middle = { random: () => 0.5 };
    expect([1, 2, 3, 4, 5, 6, 7, 8, 20].map((n) => backoffDelay(n, middle))).toEqual([
      5_000, 10_000, 20_000, 40_000, 80_000, 160_000, 300_000, 300_000, 300_000,
    ]);
  });

  it("spreads each delay by jitter, within 5 s … 5 min", () => {
    expect(backoffDelay(3, { random: () => 0 })).toBe(16_000);
    expect(backoffDelay(3, { random: () => 0.999999 })).toBe(24_000);
    expect(backoffDelay(1, { random: () => 0 })).toBe(5_000);
    expect(backoffDelay(12, { random: () => 0.999999 })).toBe(300_000);
    expect(backoffDelay(12, { random: () => 0 })).toBe(240_000);
  });

  it("treats zero or negative failure counts as the first", () => {
    expect(backoffDelay(0, { random: () => 0.5 })).toBe(5_000);
  });

  it("adds the jitter on top when asked, past the cap too (Google's backoff: 1 s doubling to 64 s, plus up to 1 s)", () => {
    const google = { minMs: 1_000, maxMs: 64_000, addMs: 1_000 };
    expect([1, 2, 3, 7, 8].map((n) => backoffDelay(n, { ...google, random: () => 0 }))).toEqual([1_000, 2_000, 4_000, 64_000, 64_000]);
    expect(backoffDelay(7, { ...google, random: () => 0.5 })).toBe(64_500);
  });
});
