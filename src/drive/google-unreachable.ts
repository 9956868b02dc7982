/**
 * What to tell a person when a request to Google never got an HTTP answer: DNS, connection, TLS, or no answer within
 * the timeout. The raw text (`request to https://… failed, reason: getaddrinfo EAI_AGAIN …`) says neither what was
 * being reached nor where to look; this names the host, the cause in words with its code, and what to check. In
 * Docker the command runs in the container, whose DNS and network are not the host's.
 */

/** `undefined` when `error` carries an HTTP answer or is no network failure: the caller explains those. */
export function describeUnreachable(error: unknown, url: string, timeoutMs: number): string | undefined {
  const why = networkCause(error, url, timeoutMs);
  if (why === undefined) return undefined;
  const host = hostOf(url);
  return (
    `Cannot reach Google at ${host}: ${why}. ` +
    "Check DNS and network access from where this command runs (in Docker: inside the autoscan container, whose DNS " +
    "and network are not the host's), and the proxy if this network needs one (HTTPS_PROXY)."
  );
}

interface ErrorLike {
  readonly code?: unknown;
  readonly name?: unknown;
  readonly message?: unknown;
  readonly hostname?: unknown;
  readonly cause?: unknown;
  readonly response?: unknown;
}

const DNS_CODES: Readonly<Record<string, string>> = {
  EAI_AGAIN: "no answer from the DNS server",
  ENOTFOUND: "no such name",
  EAI_FAIL: "the DNS server failed",
  EAI_NODATA: "no address for that name",
};
const CONNECT_CODES: Readonly<Record<string, string>> = {
  ECONNREFUSED: "the connection was refused",
  ECONNRESET: "the connection was cut",
  EPIPE: "the connection was cut",
  ENETUNREACH: "no route to it",
  EHOSTUNREACH: "no route to it",
  ENETDOWN: "the network is down",
  ETIMEDOUT: "the connection timed out",
};

function networkCause(error: unknown, url: string, timeoutMs: number): string | undefined {
  const chain = causes(error);
  if (chain.some((e) => e.response !== undefined)) return undefined;
  const codes = chain.map((e) => e.code).filter((code): code is string => typeof code === "string");
  const names = chain.map((e) => e.name).filter((name): name is string => typeof name === "string");
  const timedOut =
    codes.includes("TimeoutError") ||
    names.includes("TimeoutError") ||
    chain.some((e) => typeof e.message === "string" && /aborted due to timeout|timed? ?out/i.test(e.message));
  if (timedOut && !codes.includes("ETIMEDOUT")) return `no answer within ${seconds(timeoutMs)}`;
  for (const code of codes) {
    const dns = DNS_CODES[code];
    if (dns) {
      const named = chain.map((e) => e.hostname).find((h): h is string => typeof h === "string") ?? hostnameOf(url);
      return `the name ${named} does not resolve (${code}: ${dns})`;
    }
    const connect = CONNECT_CODES[code];
    if (connect) return `${connect} (${code})`;
    if (/CERT|SELF_SIGNED|UNABLE_TO_(GET|VERIFY)/.test(code)) {
      return `its TLS certificate is not trusted here (${code}); a proxy or firewall that inspects HTTPS?`;
    }
  }
  const message = chain.map((e) => e.message).find((m): m is string => typeof m === "string" && m !== "");
  if (codes.some((code) => /^E[A-Z_]+$/.test(code)) || (message !== undefined && /fetch failed|socket hang up/i.test(message))) {
    return message ?? codes[0] ?? "no answer";
  }
  return undefined;
}

/** The error and its causes, outermost first (a few levels: the HTTP client wraps the socket's error). */
function causes(error: unknown): ErrorLike[] {
  const chain: ErrorLike[] = [];
  let current: unknown = error;
  while (current && typeof current === "object" && chain.length < 5) {
    chain.push(current as ErrorLike);
    current = (current as ErrorLike).cause;
  }
  return chain;
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

function hostnameOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return url;
  }
}

/** 5000 → "5 s", 300 → "0.3 s". */
function seconds(ms: number): string {
  return `${Math.round(ms / 100) / 10} s`;
}
