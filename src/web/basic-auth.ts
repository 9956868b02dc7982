import type { Context } from "hono";
import { text } from "./responses.ts";
import { safeEqual } from "./secret.ts";

/**
 * HTTP Basic auth for the bare `/triggers/manual` (RFC 7617). Both parts are compared in constant time, and both are
 * always compared, so a right username with a wrong password takes as long as a wrong username.
 */
export interface Credentials {
  readonly username: string;
  readonly password: string;
}

export function isAuthorized(header: string | undefined, expected: Credentials): boolean {
  const given = parseBasicAuth(header);
  if (!given) return false;
  const userOk = safeEqual(given.username, expected.username);
  const passOk = safeEqual(given.password, expected.password);
  return userOk && passOk;
}

export function parseBasicAuth(header: string | undefined): Credentials | undefined {
  const match = header ? /^Basic[ \t]+([A-Za-z0-9+/]+={0,2})[ \t]*$/i.exec(header) : null;
  if (!match?.[1]) return undefined;
  const decoded = decodeCredentials(Buffer.from(match[1], "base64"));
  const colon = decoded.indexOf(":");
  if (colon < 0) return undefined;
  return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

export const BASIC_CHALLENGE = 'Basic realm="autoscan", charset="UTF-8"';

/** The answer to missing or wrong credentials: 401 with the challenge. */
export function unauthorized(c: Context): Response {
  return text(c, "Unauthorized", 401, { "www-authenticate": BASIC_CHALLENGE });
}

/** UTF-8 as RFC 7617's charset asks, else ISO-8859-1, which the *arr apps and older clients send. */
function decodeCredentials(bytes: Buffer): string {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return bytes.toString("latin1");
  }
}
