import { createHash, timingSafeEqual } from "node:crypto";

/**
 * The URL secret (`SERVER_PASS`). A candidate is copied into a buffer of the secret's length (cut or zero-padded) and
 * compared with `timingSafeEqual`, so the time taken depends on the secret's length only: it says nothing about how
 * much of a guess was right. (Hashing both sides per request costs more than the rest of the check.)
 */
export interface UrlSecret {
  matches(candidate: string | undefined): boolean;
  /** The text with every occurrence of the secret (raw or percent-encoded) replaced: for logging URLs. */
  redact(text: string): string;
}

export const REDACTED_SECRET = "<SERVER_PASS>";

export function createUrlSecret(secret: string): UrlSecret {
  const expected = Buffer.from(secret, "utf8");
  const scratch = Buffer.alloc(expected.length);
  const spellings = [...new Set([secret, encodeURIComponent(secret)])].filter((s) => s.length > 0);
  return {
    matches(candidate) {
      if (candidate === undefined) return false;
      scratch.fill(0);
      const written = scratch.write(candidate, "utf8");
      const sameLength = written === expected.length && Buffer.byteLength(candidate, "utf8") === expected.length;
      return timingSafeEqual(scratch, expected) && sameLength;
    },
    redact: (text) => spellings.reduce((out, spelling) => out.split(spelling).join(REDACTED_SECRET), text),
  };
}

/** Constant-time equality of two short strings of any length (credentials): both are hashed first. */
export function safeEqual(a: string, b: string): boolean {
  return timingSafeEqual(digest(a), digest(b));
}

function digest(text: string): Buffer {
  return createHash("sha256").update(text, "utf8").digest();
}
