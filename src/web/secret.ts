import { createHash, timingSafeEqual } from "node:crypto";

/**
 * The URL secret (`SERVER_PASS`). Candidates are compared as SHA-256 digests with `timingSafeEqual`, so the time taken
 * says nothing about how much of a guess was right, nor about the secret's length.
 */
export interface UrlSecret {
  matches(candidate: string | undefined): boolean;
  /** The text with every occurrence of the secret (raw or percent-encoded) replaced: for logging URLs. */
  redact(text: string): string;
}

export const REDACTED_SECRET = "<SERVER_PASS>";

export function createUrlSecret(secret: string): UrlSecret {
  const expected = digest(secret);
  const spellings = [...new Set([secret, encodeURIComponent(secret)])].filter((s) => s.length > 0);
  return {
    matches: (candidate) => candidate !== undefined && timingSafeEqual(digest(candidate), expected),
    redact: (text) => spellings.reduce((out, spelling) => out.split(spelling).join(REDACTED_SECRET), text),
  };
}

/** Constant-time equality of two strings of any length. */
export function safeEqual(a: string, b: string): boolean {
  return timingSafeEqual(digest(a), digest(b));
}

function digest(text: string): Buffer {
  return createHash("sha256").update(text, "utf8").digest();
}
