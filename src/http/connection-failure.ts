import type { HttpTimeoutPhase } from "./http-call.ts";

/**
 * Why a call got no answer, read once from the error where it enters (http-call.ts's `HttpTimeoutError`, the socket's
 * `code`, a driver's "timeout" along the `cause` chain), for every caller to word in its own setting: doctor's checks,
 * the start-up checks, the Plex and Jellyfin/Emby clients' messages. The kinds differ in what the user does next:
 * - `timeout`: nothing came back in time. `resolve`: the name had no address yet (a DNS server that does not answer);
 *   `connect`: the connection itself never completed (a wrong address, or a firewall that drops packets instead of
 *   refusing them); `answer`: it connected, but no answer came (a hung server);
 * - `refused`: the host is there, but nothing listens on that port (the server is down, or the port is wrong);
 * - `dns`: the name does not resolve (a typo, or a container name on another Docker network);
 * - `no-route`: no network path to the address (EHOSTUNREACH, ENETUNREACH);
 * - `cut`: it took the connection, then closed it without a (whole) answer;
 * - `not-http`: bytes came back, but not HTTP (another protocol on that port): the one kind where something answered;
 * - `tls`: a TLS handshake failed (a certificate not trusted here, https:// to a plain HTTP port);
 * - `other`: another socket error, by its code.
 * `undefined`: no network failure is in the chain, so the server answered (a status, a body the client could not read)
 * or the caller gave up; only then may a message say "answered, but not as Plex does".
 */
export type ConnectionFailure =
  | { readonly kind: "timeout"; readonly phase: HttpTimeoutPhase }
  | { readonly kind: "refused" }
  | { readonly kind: "dns"; readonly code: string; readonly hostname?: string }
  | { readonly kind: "no-route"; readonly code: string }
  | { readonly kind: "cut"; readonly code: string }
  | { readonly kind: "not-http"; readonly code: string }
  | { readonly kind: "tls"; readonly code: string }
  | { readonly kind: "other"; readonly code: string };

interface ErrorLike {
  readonly code?: unknown;
  readonly name?: unknown;
  readonly hostname?: unknown;
  readonly phase?: unknown;
  readonly cause?: unknown;
}

const DNS_CODES = new Set(["ENOTFOUND", "EAI_AGAIN", "EAI_FAIL", "EAI_NODATA", "EAI_NONAME"]);
const NO_ROUTE_CODES = new Set(["EHOSTUNREACH", "ENETUNREACH", "EHOSTDOWN", "ENETDOWN", "EADDRNOTAVAIL"]);
const CUT_CODES = new Set(["ECONNRESET", "EPIPE", "ECONNABORTED"]);

export function classifyConnectionFailure(error: unknown): ConnectionFailure | undefined {
  for (const link of causeChain(error)) {
    const code = typeof link.code === "string" ? link.code : "";
    const name = typeof link.name === "string" ? link.name : "";
    // http-call.ts's own timeout says whether the connection had completed.
    if (name === "HttpTimeoutError") return { kind: "timeout", phase: link.phase === "answer" || link.phase === "resolve" ? link.phase : "connect" };
    // The kernel's connect timeout (a long PLEX_TIMEOUT), AbortSignal.timeout(), pg's connectionTimeoutMillis.
    if (code === "ETIMEDOUT") return { kind: "timeout", phase: "connect" };
    if (name === "TimeoutError") return { kind: "timeout", phase: "connect" };
    if (code === "ECONNREFUSED") return { kind: "refused" };
    if (DNS_CODES.has(code)) return { kind: "dns", code, ...(typeof link.hostname === "string" ? { hostname: link.hostname } : {}) };
    if (NO_ROUTE_CODES.has(code)) return { kind: "no-route", code };
    if (CUT_CODES.has(code)) return { kind: "cut", code };
    // Node's HTTP parser: bytes came back, but not HTTP (an SSH or TLS port, another protocol).
    if (code.startsWith("HPE_")) return { kind: "not-http", code };
    if (/^ERR_TLS_|^ERR_SSL_|CERT|SELF_SIGNED|UNABLE_TO_(GET|VERIFY)|^EPROTO$/.test(code)) return { kind: "tls", code };
    if (/^E[A-Z_]+$/.test(code)) return { kind: "other", code };
  }
  return undefined;
}

/**
 * The failure in a few words, for a client's message (`Plex is unreachable at http://plex:32400 (GET /): …`) and the
 * log: what happened and the likely cause, with the code for a search.
 */
export function connectionFailureWords(failure: ConnectionFailure, seconds?: number): string {
  const within = seconds === undefined ? "in time" : `within ${String(seconds)} s`;
  switch (failure.kind) {
    case "timeout":
      return `no answer ${within}: ${timeoutCause(failure.phase)}`;
    case "refused":
      return "connection refused (ECONNREFUSED): nothing listens there (down, or the wrong port)";
    case "dns":
      return `${failure.hostname ?? "the name"} does not resolve (${failure.code}${failure.code === "EAI_AGAIN" ? ": no answer from the DNS server" : ""})`;
    case "no-route":
      return `no route to that address (${failure.code}): a wrong address, or a network autoscan is not on`;
    case "cut":
      return `it took the connection, then closed it without an answer (${failure.code})`;
    case "not-http":
      return `it answered, but not in HTTP (${failure.code}): another program listens on that port`;
    case "tls":
      return `the TLS handshake failed (${failure.code}): https:// to a plain HTTP port, or a certificate not trusted here`;
    case "other":
      return `cannot connect (${failure.code})`;
  }
}

/** What a timeout's phase tells of its cause, for a client's "did not answer GET / within 10 s (…): <cause>". */
export function timeoutCause(phase: HttpTimeoutPhase): string {
  return {
    resolve: "the name had no address yet (the DNS server does not answer)",
    connect: "the connection never completed (a wrong address, or a firewall dropping it)",
    answer: "it connected, but no answer came (the server hangs?)",
  }[phase];
}

/** The error and its causes, outermost first (a client wraps the socket's error; a few levels at most). */
function causeChain(error: unknown): ErrorLike[] {
  const chain: ErrorLike[] = [];
  let current: unknown = error;
  while (current && typeof current === "object" && chain.length < 8) {
    chain.push(current as ErrorLike);
    // An AggregateError (Node's connect to each address of a name, one after the other) holds each try's error.
    const errors = (current as { errors?: unknown }).errors;
    if (Array.isArray(errors) && errors.length > 0 && typeof (current as ErrorLike).code !== "string") chain.push(...(errors as ErrorLike[]).slice(0, 4));
    current = (current as ErrorLike).cause;
  }
  return chain;
}
