import { safeDecode } from "./safe-decode.ts";

/**
 * `SERVER_DATABASE_URL`, the PostgreSQL connection URL (`postgres://user:password@host:5432/database`), as the config,
 * the logs, `config check` and `autoscan doctor` see it. The password never leaves this module in clear: what people
 * read is `postgres://user:***@host:5432/database`. Written for `new URL`, which is how the `pg` driver parses it
 * (pg-connection-string): the userinfo is percent-decoded, a `?host=` or `?password=` parameter wins over the URL's.
 */
export const DATABASE_URL_EXAMPLE = "postgres://autoscan:PASSWORD@postgres:5432/autoscan";

export interface DatabaseUrlParts {
  readonly host: string;
  readonly port: number;
  readonly database: string;
  readonly user: string;
}

export type DatabaseUrlCheck = { readonly ok: true; readonly parts: DatabaseUrlParts } | { readonly ok: false; readonly problem: string };

/** What is wrong with a non-empty `SERVER_DATABASE_URL`, in words that never hold its password. */
export function checkDatabaseUrl(text: string): DatabaseUrlCheck {
  const url = parseUrl(text);
  const shown = maskDatabaseUrl(text);
  if (!url) {
    return {
      ok: false,
      problem:
        `expected a URL such as ${DATABASE_URL_EXAMPLE}, found "${shown}" ` +
        "(special characters in the user or password are percent-encoded: @ as %40, / as %2F, # as %23, : as %3A)",
    };
  }
  if (url.protocol !== "postgres:" && url.protocol !== "postgresql:") {
    return { ok: false, problem: `expected a postgres:// or postgresql:// URL, such as ${DATABASE_URL_EXAMPLE}, found "${shown}"` };
  }
  const host = url.searchParams.get("host") || url.hostname.replace(/^\[(.+)\]$/, "$1");
  if (!host) return { ok: false, problem: `the URL "${shown}" names no host: write it as ${DATABASE_URL_EXAMPLE}` };
  const database = safeDecode(url.pathname.replace(/^\//, ""));
  if (!database || database.includes("/")) {
    return {
      ok: false,
      problem: `the URL "${shown}" names no database (the path after the host, e.g. …:5432/autoscan): write it as ${DATABASE_URL_EXAMPLE}`,
    };
  }
  const port = Number(url.searchParams.get("port") || url.port || 5432);
  const user = url.searchParams.get("user") || safeDecode(url.username);
  return { ok: true, parts: { host, port, database, user } };
}

/**
 * The URL with its password as `***` (in the userinfo and in a `password=` parameter). A text that is no URL with a
 * host (an unencoded `/` or `#` in the password, no scheme) has everything from its user's `:` to its last `@` hidden.
 */
export function maskDatabaseUrl(text: string): string {
  const url = parseUrl(text);
  if (!url || url.host === "") return maskLoosely(text);
  if (!url.password && !url.searchParams.has("password")) return text;
  const userinfo = url.password ? `${url.username}:***@` : url.username ? `${url.username}@` : "";
  const search = url.search.replace(/([?&]password=)[^&#]*/gi, "$1***");
  return `${url.protocol}//${userinfo}${url.host}${url.pathname}${search}${url.hash}`;
}

/** The password as the driver sends it (decoded), and as written: both are secrets for the log's scrubber. */
export function databaseUrlSecrets(text: string): string[] {
  if (!text) return [];
  const url = parseUrl(text);
  if (!url) {
    const loose = /^[^:]+:\/\/[^:@/]*:(.*)@/.exec(text)?.[1];
    return loose ? [loose] : [];
  }
  const found = [url.password, safeDecode(url.password), url.searchParams.get("password") ?? ""];
  return [...new Set(found.filter((secret) => secret !== ""))];
}

function maskLoosely(text: string): string {
  const masked = text.replace(/([?&]password=)[^&#]*/gi, "$1***");
  const at = masked.lastIndexOf("@");
  if (at < 0) return masked;
  const head = /^[^:/@]+:\/\/(?:[^:@/]*:)?/.exec(masked)?.[0] ?? "";
  return `${head}***${masked.slice(at)}`;
}

function parseUrl(text: string): URL | undefined {
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}
