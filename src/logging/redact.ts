/**
 * Secrets never reach a log line. Two nets: pino's path redaction for fields we know are secret, and a text scrub of
 * every finished line for the secret values themselves (a Plex token inside a URL, `SERVER_PASS` in a request path,
 * an OAuth token that appeared in an error message).
 */
export const REDACTED = "<redacted>";

/** Field paths pino censors before serialising. */
export const REDACT_PATHS = [
  "token",
  "*.token",
  "plexToken",
  "*.plexToken",
  "password",
  "*.password",
  "secret",
  "clientSecret",
  "*.clientSecret",
  "client_secret",
  "*.client_secret",
  "access_token",
  "*.access_token",
  "refresh_token",
  "*.refresh_token",
  "accessToken",
  "*.accessToken",
  "refreshToken",
  "*.refreshToken",
  "idToken",
  "*.idToken",
  "authorization",
  "*.authorization",
  "headers.authorization",
  "*.headers.authorization",
  'headers["x-plex-token"]',
  '*.headers["x-plex-token"]',
  "body",
  "*.body",
];

/** Query parameters and header-like pairs whose value is a secret wherever they appear in text. */
const SECRET_PATTERNS: readonly RegExp[] = [
  /([?&](?:X-Plex-Token|token|access_?token|refresh_?token|client_?secret|code)=)[^&\s"']+/gi,
  /("(?:X-Plex-Token|access_?token|refresh_?token|client_?secret|id_?token)"\s*:\s*")[^"]+/gi,
  /((?:Bearer|Basic)\s+)[A-Za-z0-9._~+/=-]{8,}/g,
];

export interface Scrubber {
  scrub(text: string): string;
  /** Secrets learned at run time (an OAuth token just fetched) are added here. Values shorter than 6 are ignored. */
  add(secret: string | undefined): void;
}

export function createScrubber(initial: readonly (string | undefined)[] = []): Scrubber {
  const secrets = new Set<string>();
  const add = (secret: string | undefined): void => {
    if (secret && secret.length >= 6) {
      secrets.add(secret);
      secrets.add(encodeURIComponent(secret));
      // As it appears inside a JSON string (quotes and backslashes escaped).
      secrets.add(JSON.stringify(secret).slice(1, -1));
    }
  };
  initial.forEach(add);
  return {
    add,
    scrub(text) {
      let out = text;
      for (const pattern of SECRET_PATTERNS) out = out.replace(pattern, `$1${REDACTED}`);
      for (const secret of secrets) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
      return out;
    },
  };
}
