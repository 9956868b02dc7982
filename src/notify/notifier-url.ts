import { safeDecode } from "../core/safe-decode.ts";

/**
 * A notifier's URL holds its secret: a Discord webhook's token is in the path, an ntfy topic is its own password, an
 * apprise-api key reaches every service configured behind it, and any of them may carry `user:password@`. So the URL
 * is split once: what is sent (without the userinfo, which becomes HTTP Basic auth, as ntfy and reverse proxies take
 * it), what may be shown (scheme, host and port only), and what log redaction must hide.
 */
export interface NotifierUrl {
  /** The URL requests go to, without `user:password@`. */
  readonly sendUrl: string;
  /** `Basic …` from the URL's userinfo (ntfy: an empty user and a `tk_…` token as the password work too). */
  readonly authorization?: string;
  /** Scheme, host and port: all that logs, doctor, `/health` and error messages say of it. */
  readonly shown: string;
  /**
   * What log redaction hides everywhere: the whole URL as written, its path and query, the userinfo's password, and
   * each path segment or query value long enough to be a token (20+ characters: a Discord token is ~68).
   */
  readonly secrets: readonly string[];
  /**
   * What is hidden in the receiver's own answers, which may quote any part of the URL on its own (ntfy: "topic … is
   * reserved"): `secrets` and every path segment and query value however short (an ntfy topic, an apprise key, a
   * `?token=` value). Short ones are matched as whole words (logging/redact.ts), and only in this receiver's answer:
   * hiding a 4-letter topic in every log line would also hide that word wherever else it is written.
   */
  readonly answerSecrets: readonly string[];
}

const TOKEN_LIKE = 20;

export function parseNotifierUrl(text: string): NotifierUrl {
  const url = new URL(text);
  const user = decodeURIComponent(url.username);
  const password = decodeURIComponent(url.password);
  const userinfo = user !== "" || password !== "";
  url.username = "";
  url.password = "";
  const rest = `${url.pathname}${url.search}`;
  const parts = [...url.pathname.split("/").map(safeDecode), ...[...url.searchParams.values()]].filter((part) => part.length > 0);
  const secrets = unique([text, url.href, rest.length > 1 ? rest : "", password, ...parts.filter((part) => part.length >= TOKEN_LIKE)]);
  return {
    sendUrl: url.href,
    ...(userinfo ? { authorization: `Basic ${Buffer.from(`${user}:${password}`, "utf8").toString("base64")}` } : {}),
    shown: url.origin,
    secrets,
    answerSecrets: unique([...secrets, ...parts]),
  };
}

function unique(values: readonly string[]): string[] {
  return [...new Set(values.filter((value) => value.length > 0))];
}

/** What may be shown of a notifier URL (`https://discord.com`), or a placeholder when it is not a URL at all. */
export function shownNotifierUrl(text: string): string {
  return URL.parse(text)?.origin ?? "(not a URL)";
}
