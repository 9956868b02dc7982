import { describeError } from "../../core/errors.ts";
import { classifyConnectionFailure } from "../../http/connection-failure.ts";
import { fail, type CheckResult } from "./check.ts";

/**
 * What is wrong when a server autoscan calls does not answer, and what to do about it: `localhost` inside a
 * container, a name that does not resolve, a closed port (refused), a timeout (the connection never completed: a wrong
 * address or a firewall; or no answer came: a hung server), no route, a cut connection, a TLS handshake, another socket
 * error, each read once by http/connection-failure.ts. The same words for every
 * family that calls out (Plex, the database, the *arr apps, the TARGETS). The server is described by the check's `id`
 * and `title` (`arr:sonarr`, `sonarr`), the `url` shown (scheme, host and port only), what should answer there
 * (`label`: `Sonarr`), the `setting` that holds the URL (`ARR.sonarr.URL`), where it usually listens (`portHint`:
 * `Sonarr listens on 8989`), a URL that works from a container on the same network (`example`: `http://sonarr:8989`)
 * and how long one call may take. `describeAnswer`: the call read the answer (Plex's client), so an error with no
 * network failure in it means bytes came back, from something other than that server: only then "answered, but not
 * as …", with what the answer was in these words.
 */
export interface UnreachableServer {
  readonly id: string;
  readonly title: string;
  readonly url: string;
  readonly label: string;
  readonly setting: string;
  readonly portHint: string;
  readonly example: string;
  readonly timeoutSeconds: number;
  readonly describeAnswer?: (error: unknown) => string;
}

export function unreachableCheck(server: UnreachableServer, error: unknown, inContainer: boolean): CheckResult {
  const { id, title, url, label, setting, portHint } = server;
  const parsed = URL.parse(url); // the config validated it
  const host = parsed?.hostname.replace(/^\[|\]$/g, "") ?? "";
  const failure = classifyConnectionFailure(error);
  const seconds = server.timeoutSeconds;
  if (isLoopback(host) && inContainer && failure?.kind !== "not-http") {
    return fail(
      id,
      title,
      `No answer at ${url}: autoscan runs in a container, where '${host}' is the autoscan container itself, not ${label}.`,
      `Set ${setting} to ${label}'s container name on a Docker network both share, e.g. ${server.example} (or the host's LAN address).`,
    );
  }
  const dnsServerFix = `Check the DNS of where autoscan runs (in Docker: the container's network), or use ${label}'s IP address in ${setting}.`;
  switch (failure?.kind) {
    case "timeout":
      // The most common first-day mistake: a wrong LAN address, or a firewall that drops rather than refuses.
      if (failure.phase === "resolve") {
        return fail(
          id,
          title,
          `no answer within ${seconds} s from ${url}: the name ${host} had no address yet (the DNS server does not answer).`,
          dnsServerFix,
        );
      }
      return failure.phase === "connect"
        ? fail(
            id,
            title,
            `no answer within ${seconds} s from ${url}: a wrong address or a firewall (the connection never completed).`,
            `Check the address in ${setting} (${label}'s LAN address or container name, as seen from where autoscan runs; ${portHint}), then any firewall between autoscan and ${label}.`,
          )
        : fail(
            id,
            title,
            `no answer within ${seconds} s from ${url}: it took the connection but never answered (${label} hangs, or what listens there waits on something).`,
            `Check that ${label} is up and answering (restart it if it hangs), and that ${setting} points at ${label} itself (${portHint}).`,
          );
    case "refused":
      return fail(id, title, `connection refused: nothing listens at ${url} (is ${label} running? is the port right?).`, `Start ${label}, or correct the address and port in ${setting} (${portHint}).`);
    case "dns":
      return fail(
        id,
        title,
        `${host} does not resolve (${failure.code}${failure.code === "EAI_AGAIN" ? ": no answer from the DNS server" : ""}): ${setting} names a host autoscan cannot find.`,
        failure.code === "EAI_AGAIN"
          ? dnsServerFix
          : `Check the name for a typo. If ${label} runs in a container, put autoscan on the same Docker network and use the container's name (e.g. ${server.example}); else use its IP address.`,
      );
    case "no-route":
      return fail(id, title, `No route to ${host} (${failure.code}): no network autoscan is on leads to the address in ${setting}.`, `Check the address in ${setting} for a typo, and that autoscan's network (in Docker: the container's) can reach ${label}.`);
    case "cut":
      return fail(id, title, `${url} took the connection, then closed it without an answer (${failure.code}).`, `Check that ${setting} points at ${label} itself (${portHint}), with http:// or https:// as ${label} expects.`);
    case "not-http":
      return foreignCheck(server, `it does not speak HTTP there (${failure.code})`);
    case "tls":
      return fail(id, title, `The TLS handshake with ${url} failed (${failure.code}).`, `Use http:// in ${setting} if ${label} serves plain HTTP there; else a URL whose name its certificate carries.`);
    case "other":
      return fail(id, title, `Cannot connect to ${url} (${failure.code}).`, `Check the address in ${setting} and the network between autoscan and ${label}.`);
    case undefined:
      // No network failure: the call's answer came back (bytes did) and was not what the server sends.
      if (server.describeAnswer) return foreignCheck(server, server.describeAnswer(error));
      return fail(id, title, `Cannot reach ${url}: ${describeError(error)}.`, `Check the address in ${setting}.`);
  }
}

/** Something answered at the URL (bytes came back), but not as the server autoscan expects there: what it said. */
export function foreignCheck(server: Pick<UnreachableServer, "id" | "title" | "url" | "label" | "setting" | "portHint">, said: string): CheckResult {
  return fail(
    server.id,
    server.title,
    `${server.url} answered, but not as ${server.label} does: ${said}.`,
    `Check that ${server.setting} points at ${server.label} itself (${server.portHint}), not at a proxy or another app.`,
  );
}

export function isLoopback(host: string): boolean {
  const name = host.toLowerCase();
  return name === "localhost" || name.endsWith(".localhost") || name === "::1" || /^127\./.test(name) || name === "0.0.0.0";
}
