import { describeError } from "../../core/errors.ts";
import { causeCodes, fail, type CheckResult } from "./check.ts";

/**
 * What is wrong when a server autoscan calls does not answer, and what to do about it: `localhost` inside a
 * container, a name that does not resolve, a closed port, a timeout, another socket error. The same words for every
 * family that calls out (Plex, the database, the *arr apps, the TARGETS). The server is described by the check's `id`
 * and `title` (`arr:sonarr`, `sonarr`), the `url` shown (scheme, host and port only), what should answer there
 * (`label`: `Sonarr`), the `setting` that holds the URL (`ARR.sonarr.URL`), where it usually listens (`portHint`:
 * `Sonarr listens on 8989`), a URL that works from a container on the same network (`example`: `http://sonarr:8989`)
 * and how long one call may take. `readsAnswer`: the call read the answer (Plex's client), so an error without a
 * socket code means something else answered there.
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
  readonly readsAnswer?: boolean;
}

export function unreachableCheck(server: UnreachableServer, error: unknown, inContainer: boolean): CheckResult {
  const { id, title, url, label, setting } = server;
  const parsed = URL.parse(url); // the config validated it
  const host = parsed?.hostname.replace(/^\[|\]$/g, "") ?? "";
  const port = parsed ? parsed.port || (parsed.protocol === "https:" ? "443" : "80") : "";
  const codes = causeCodes(error);
  if (isLoopback(host) && inContainer) {
    return fail(
      id,
      title,
      `No answer at ${url}: autoscan runs in a container, where '${host}' is the autoscan container itself, not ${label}.`,
      `Set ${setting} to ${label}'s container name on a Docker network both share, e.g. ${server.example} (or the host's LAN address).`,
    );
  }
  if (codes.includes("ENOTFOUND") || codes.includes("EAI_AGAIN")) {
    return fail(
      id,
      title,
      `The name '${host}' in ${setting} does not resolve (${codes.includes("ENOTFOUND") ? "ENOTFOUND" : "EAI_AGAIN"}).`,
      `If ${label} runs in a container, put autoscan on the same Docker network and use the container's name; else use its IP address.`,
    );
  }
  if (codes.includes("ECONNREFUSED")) {
    return fail(id, title, `Nothing listens at ${host}:${port} (connection refused).`, `Start ${label}, or correct the address and port in ${setting} (${server.portHint}).`);
  }
  if (codes.includes("TIMEOUT")) {
    return fail(id, title, `No answer from ${url} within ${server.timeoutSeconds} s.`, `Check the address in ${setting} and any firewall between autoscan and ${label}.`);
  }
  const code = codes.find((c) => /^E[A-Z_]+$/.test(c));
  if (code) return fail(id, title, `Cannot connect to ${url} (${code}).`, `Check the address in ${setting} and the network between autoscan and ${label}.`);
  if (server.readsAnswer) return foreignCheck(server, describeError(error));
  return fail(id, title, `No answer from ${url}: ${describeError(error)}.`, `Check the address in ${setting}.`);
}

/** Something answered at the URL, but not as the server autoscan expects there: what it said. */
export function foreignCheck(server: Pick<UnreachableServer, "id" | "title" | "url" | "label" | "setting" | "portHint">, said: string): CheckResult {
  return fail(
    server.id,
    server.title,
    `Something answered at ${server.url}, but not as ${server.label} does: ${said}.`,
    `Check that ${server.setting} points at ${server.label} itself (${server.portHint}), not at a proxy or another app.`,
  );
}

export function isLoopback(host: string): boolean {
  const name = host.toLowerCase();
  return name === "localhost" || name.endsWith(".localhost") || name === "::1" || /^127\./.test(name) || name === "0.0.0.0";
}
