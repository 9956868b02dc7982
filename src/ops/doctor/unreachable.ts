import { describeError } from "../../core/errors.ts";
import { causeCodes, fail, type CheckResult } from "./check.ts";

/**
 * What is wrong when a server autoscan calls does not answer, and what to do about it: `localhost` inside a
 * container, a name that does not resolve, a closed port, a timeout, another socket error. The same words for every
 * family that calls out (Plex, the database, the *arr apps, the TARGETS).
 */
export interface UnreachableServer {
  /** The check's id and title (`arr:sonarr`, `sonarr`). */
  readonly id: string;
  readonly title: string;
  /** The URL shown: scheme, host and port only. */
  readonly url: string;
  /** What should answer there: `Sonarr`, `Jellyfin`. */
  readonly label: string;
  /** The setting that holds the URL: `ARR.sonarr.URL`. */
  readonly setting: string;
  /** Where it usually listens: `Sonarr listens on 8989`. */
  readonly portHint: string;
  /** A URL that would work from a container on the same network: `http://sonarr:8989`. */
  readonly example: string;
  /** How long one call may take (the probe enforces it). */
  readonly timeoutSeconds: number;
  /** The call read the answer (Plex's client): an error without a socket code means something else answered there. */
  readonly readsAnswer?: boolean;
}

export function unreachableCheck(server: UnreachableServer, error: unknown, inContainer: boolean): CheckResult {
  const { id, title, url, label, setting } = server;
  let host = "";
  let port = "";
  try {
    const parsed = new URL(url);
    host = parsed.hostname.replace(/^\[|\]$/g, "");
    port = parsed.port || (parsed.protocol === "https:" ? "443" : "80");
  } catch {
    /* the config validated it */
  }
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
