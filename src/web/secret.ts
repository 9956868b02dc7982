import { createHash, timingSafeEqual } from "node:crypto";
import { anySpelling } from "../core/secret-spelling.ts";

/**
 * The URL secret (`SERVER_PASS`). A candidate is copied into a buffer of the secret's length (cut or zero-padded) and
 * compared with `timingSafeEqual`, so the time taken depends on the secret's length only: it says nothing about how
 * much of a guess was right. (Hashing both sides per request costs more than the rest of the check.)
 */
export interface UrlSecret {
  matches(candidate: string | undefined): boolean;
  /**
   * The request path for a log line: every segment that is the secret in any percent-encoding (either hex case, some
   * characters encoded and others not, encoded more than once) is replaced, and so is the secret as it is anywhere
   * else. The logger's scrubber also knows the secret and looks for it in every spelling in every line; this gives the
   * URL its readable `<SERVER_PASS>`.
   */
  redact(path: string): string;
}

export const REDACTED_SECRET = "<SERVER_PASS>";

export function createUrlSecret(secret: string): UrlSecret {
  const expected = Buffer.from(secret, "utf8");
  const scratch = Buffer.alloc(expected.length);
  const spellings = anySpelling(secret);
  const isSecret = (segment: string): boolean => {
    // Decoded as the router does (the whole segment), and again for a segment encoded more than once.
    let text = segment;
    for (let round = 0; round < 4 && text.includes("%"); round++) {
      text = decodeLeniently(text);
      if (text === secret) return true;
    }
    return false;
  };
  return {
    matches(candidate) {
      if (candidate === undefined) return false;
      scratch.fill(0);
      const written = scratch.write(candidate, "utf8");
      const sameLength = written === expected.length && Buffer.byteLength(candidate, "utf8") === expected.length;
      return timingSafeEqual(scratch, expected) && sameLength;
    },
    redact(path) {
      if (secret.length === 0) return path;
      // Any mix of spellings, character by character (some characters encoded once, others twice …); then whole
      // segments that decode to the secret as the router reads them.
      const spelled = path.replace(spellings, REDACTED_SECRET);
      return spelled.includes("%") ? spelled.split("/").map((segment) => (isSecret(segment) ? REDACTED_SECRET : segment)).join("/") : spelled;
    },
  };
}

/** Percent-decodes what decodes (runs of `%XX` that are UTF-8) and leaves the rest as it is. */
function decodeLeniently(text: string): string {
  return text.replace(/(?:%[0-9a-fA-F]{2})+/g, (run) => {
    try {
      return decodeURIComponent(run);
    } catch {
      return run;
    }
  });
}

/** Constant-time equality of two short strings of any length (credentials): both are hashed first. */
export function safeEqual(a: string, b: string): boolean {
  return timingSafeEqual(digest(a), digest(b));
}

function digest(text: string): Buffer {
  return createHash("sha256").update(text, "utf8").digest();
}
