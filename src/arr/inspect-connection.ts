import type { ArrClient } from "./arr-client.ts";
import { ARR_TYPE_FACTS, type ArrType } from "./arr-type.ts";
import { webhookUrl } from "./app-connections.ts";
import {
  CONNECTION_NAME,
  EVENT_FLAGS,
  GRAB_FLAG,
  isEventFlag,
  METHOD_POST,
  NOTIFICATION_STATUS_SOURCE,
  WEBHOOK_IMPLEMENTATION,
  type EventFlag,
} from "./connection-facts.ts";
import { fieldValue, listNotifications, readHealth, type HealthEntry, type NotificationResource } from "./notification-api.ts";
import { safeDecode } from "../core/safe-decode.ts";

/**
 * Is an *arr app connected to this autoscan? One answer for `autoscan doctor`, `autoscan arr connect` and (later) the
 * server's periodic look: the app's connections (`GET …/notification`) and health list (`GET …/health`) judged
 * against the webhook URL autoscan expects from that app (`/<SERVER_PASS>/<name>`).
 *
 * Which connection is autoscan's: a Webhook whose URL is the expected one (host, port and path; a trailing slash and
 * the host's case aside), else one whose path is `…/<SERVER_PASS>/<name>` on any host, else one with SERVER_PASS in
 * its path, else the one named "autoscan" (names are unique in an app). Several found: the best is autoscan's (the
 * closest match, then one that sends, then the one named "autoscan", then the oldest), the others are duplicates
 * (every event reaches autoscan once per connection). Connections of other kinds, and Webhooks to other addresses
 * under other names, are the user's and never looked at again.
 *
 * The states, worst first: `missing`; `wrong-url` (it sends elsewhere); `disabled` (no event ticked: the apps' own
 * "Disabled"); `failing` (the app's health list holds it back after failed deliveries); `wrong-events` (some of the
 * events autoscan scans on are not ticked); `ok`.
 */
export interface ExpectedConnection {
  readonly type: ArrType;
  /** The app's name in `ARR`: the URL's label. */
  readonly name: string;
  readonly pass: string;
  /** `http://autoscan:3467/<pass>/<name>` (SERVER_URL_BASE included): what a new connection gets. */
  readonly url: string;
  /**
   * Whether the URL's host must be this one (`arr connect --url`). When not, only the path is compared: how the app
   * reaches autoscan (a name, an address, a proxy) is the app's side, which autoscan cannot see.
   */
  readonly strictHost: boolean;
}

/**
 * What autoscan expects of `name`'s app when the address the app uses is not known (doctor, the server): the path
 * `<SERVER_URL_BASE>/<SERVER_PASS>/<name>` on any host. Undefined without SERVER_PASS (no URL to look for).
 */
export function expectedConnection(
  name: string,
  type: ArrType,
  config: { readonly SERVER_PASS: string; readonly SERVER_PORT: number; readonly SERVER_URL_BASE: string },
): ExpectedConnection | undefined {
  if (config.SERVER_PASS === "") return undefined;
  const url = webhookUrl(`http://autoscan:${config.SERVER_PORT}${config.SERVER_URL_BASE}`, config.SERVER_PASS, name);
  return { type, name, pass: config.SERVER_PASS, url, strictHost: false };
}

export type ConnectionState = "ok" | "missing" | "disabled" | "wrong-url" | "wrong-events" | "failing";

export interface FoundConnection {
  readonly resource: NotificationResource;
  readonly id: number | undefined;
  readonly name: string;
  /** The URL as the app holds it ("" when it has none). */
  readonly url: string;
  readonly match: "url" | "path" | "pass" | "name";
}

export interface ConnectionInspection {
  readonly state: ConnectionState;
  /** One sentence, SERVER_PASS masked (`/<SERVER_PASS>/sonarr`). */
  readonly detail: string;
  readonly connection?: FoundConnection;
  readonly duplicates: readonly FoundConnection[];
  /** The events autoscan scans on that are not ticked (their labels). */
  readonly missingEvents: readonly string[];
  /** The app had stopped sending to it after failed deliveries (its health list says so). */
  readonly failing: boolean;
}

/** Reads the app's connections and health list and judges them. Throws as the client throws (unreachable, key …). */
export async function inspectArrConnection(client: ArrClient, expected: ExpectedConnection, signal?: AbortSignal): Promise<ConnectionInspection> {
  const list = await listNotifications(client, signal);
  const found = findConnections(list, expected);
  const health = found.connection ? await readHealth(client, signal) : [];
  return judgeConnection(found, health, expected);
}

export function findConnections(list: readonly NotificationResource[], expected: ExpectedConnection): { connection?: FoundConnection; duplicates: FoundConnection[] } {
  const rank = { url: 0, path: 1, pass: 2, name: 3 } as const;
  const matches: FoundConnection[] = [];
  for (const resource of list) {
    if ((resource.implementation ?? "").toLowerCase() !== WEBHOOK_IMPLEMENTATION.toLowerCase()) continue;
    const url = typeof fieldValue(resource, "url") === "string" ? (fieldValue(resource, "url") as string) : "";
    const name = resource.name ?? "";
    const match = urlMatch(url, expected) ?? (name.toLowerCase() === CONNECTION_NAME ? "name" : undefined);
    if (match) matches.push({ resource, id: resource.id, name, url, match });
  }
  const named = (found: FoundConnection): number => Number(found.name.toLowerCase() === CONNECTION_NAME);
  matches.sort(
    (a, b) =>
      rank[a.match] - rank[b.match] || Number(sends(b.resource)) - Number(sends(a.resource)) || named(b) - named(a) || (a.id ?? 0) - (b.id ?? 0),
  );
  const [connection, ...duplicates] = matches;
  return connection ? { connection, duplicates } : { duplicates };
}

/** How a URL is autoscan's: the expected one, its path on another host, or SERVER_PASS somewhere in its path. */
function urlMatch(url: string, expected: ExpectedConnection): FoundConnection["match"] | undefined {
  const have = parse(url);
  const want = parse(expected.url);
  if (!have || !want) return undefined;
  if (have.origin === want.origin && have.path === want.path) return "url";
  if (have.path === want.path) return "path";
  if (expected.pass !== "" && have.segments.includes(expected.pass)) return "pass";
  return undefined;
}

/** Whether the URL is right for autoscan: the expected one, or (host not compared) its path. */
export function urlIsRight(url: string, expected: ExpectedConnection): boolean {
  const match = urlMatch(url, expected);
  return match === "url" || (match === "path" && !expected.strictHost);
}

function parse(url: string): { origin: string; path: string; segments: string[] } | undefined {
  const parsed = URL.parse(url.trim());
  if (!parsed || (parsed.protocol !== "http:" && parsed.protocol !== "https:")) return undefined;
  const segments = parsed.pathname.split("/").filter(Boolean).map(safeDecode);
  return { origin: parsed.origin.toLowerCase(), path: `/${segments.join("/")}`, segments };
}

/** Any event ticked: the app's `Enable`; none is what the apps show as "Disabled". */
export function sends(resource: NotificationResource): boolean {
  return Object.entries(resource).some(([key, value]) => isEventFlag(key) && value === true);
}

/** The events autoscan scans on that this connection does not tick (a flag this version of the app lacks aside). */
export function missingEvents(resource: NotificationResource, type: ArrType): EventFlag[] {
  return EVENT_FLAGS[type].filter(({ flag }) => {
    const supported = resource[`supportsO${flag.slice(1)}`];
    return flag in resource && resource[flag] !== true && supported !== false;
  });
}

/**
 * What `arr connect` also tidies, though no scan is lost by it (so doctor does not judge it): the method (autoscan
 * takes PUT too), and On Grab (answered, not scanned).
 */
export function methodIsPost(resource: NotificationResource): boolean {
  const method = fieldValue(resource, "method");
  return method === undefined || method === null || Number(method) === METHOD_POST;
}

export function grabIsOn(resource: NotificationResource): boolean {
  return resource[GRAB_FLAG] === true;
}

/**
 * Whether the app's health list says it stopped sending to this connection: the warning names it, or the error says
 * every connection is held back (the message is in the app's UI language; the source and the names are not).
 */
export function isFailing(health: readonly HealthEntry[], connection: FoundConnection): boolean {
  return health.some((entry) => {
    const message = entry.message ?? "";
    const fromCheck = entry.source === NOTIFICATION_STATUS_SOURCE || /unavailable due to failures/i.test(message);
    if (!fromCheck) return false;
    if (String(entry.type).toLowerCase() === "error" || /^all notifications/i.test(message)) return sends(connection.resource);
    const names = message.slice(message.indexOf(":") + 1).split(",").map((name) => name.trim());
    return names.includes(connection.name) || (connection.name.includes(",") && message.includes(connection.name));
  });
}

export function judgeConnection(
  found: { connection?: FoundConnection; duplicates: readonly FoundConnection[] },
  health: readonly HealthEntry[],
  expected: ExpectedConnection,
): ConnectionInspection {
  const { connection, duplicates } = found;
  const app = ARR_TYPE_FACTS[expected.type].appName;
  const wanted = maskUrl(expected.url, expected);
  const twice = duplicates.length
    ? ` ${duplicates.length === 1 ? "Another connection also sends" : `${duplicates.length} other connections also send`} to autoscan ` +
      `(${duplicates.map(label).join(", ")}): each event arrives once per connection.`
    : "";
  if (!connection) {
    return {
      state: "missing",
      detail: `${app} has no Webhook connection to autoscan (${expected.strictHost ? wanted : pathOf(wanted)}): it sends autoscan nothing.`,
      duplicates,
      missingEvents: EVENT_FLAGS[expected.type].map((event) => event.label),
      failing: false,
    };
  }
  const missing = missingEvents(connection.resource, expected.type).map((event) => event.label);
  const failing = isFailing(health, connection);
  const base = { connection, duplicates, missingEvents: missing, failing };
  const it = label(connection);
  if (!urlIsRight(connection.url, expected)) {
    const now = connection.url ? maskUrl(connection.url, expected) : "no URL";
    return { ...base, state: "wrong-url", detail: `${it} sends to ${now}, not to ${expected.strictHost ? wanted : `…${pathOf(wanted)}`}.${twice}` };
  }
  if (!sends(connection.resource)) {
    return { ...base, state: "disabled", detail: `${it} has no event ticked: ${app} shows it as Disabled and sends autoscan nothing.${twice}` };
  }
  if (failing) {
    return {
      ...base,
      state: "failing",
      detail: `${app}'s health list says ${it} is unavailable due to failures: ${app} stopped sending to it after failed deliveries, and tries again only after a wait.${twice}`,
    };
  }
  if (missing.length) {
    return { ...base, state: "wrong-events", detail: `${it} does not tick ${missing.join(", ")}: those are not scanned until a backfill finds them.${twice}` };
  }
  return { ...base, state: "ok", detail: `${it} sends ${app}'s imports, upgrades, renames and deletes to ${maskUrl(connection.url, expected)}.${twice}` };
}

/** `'autoscan' (id 3)`. */
export function label(connection: FoundConnection): string {
  return `'${connection.name}'${connection.id === undefined ? "" : ` (id ${connection.id})`}`;
}

/**
 * A URL to show: its userinfo and query dropped, SERVER_PASS as `<SERVER_PASS>`, and any other segment that looks
 * like a secret (16 characters or more, letters and digits: another instance's or an old pass) as `<hidden>`; the
 * app's own label is kept.
 */
export function maskUrl(url: string, expected: Pick<ExpectedConnection, "pass" | "name">): string {
  const parsed = URL.parse(url.trim());
  if (!parsed) return "(not a URL)";
  const path = parsed.pathname
    .split("/")
    .map((segment) => {
      const text = safeDecode(segment);
      if (expected.pass !== "" && text === expected.pass) return "<SERVER_PASS>";
      if (text === expected.name) return segment;
      return text.length >= 16 && /\d/.test(text) && /[A-Za-z]/.test(text) && /^[A-Za-z0-9_~.-]+$/.test(text) ? "<hidden>" : segment;
    })
    .join("/");
  return `${parsed.protocol}//${parsed.host}${path}`;
}

/** Masks SERVER_PASS in any text (an app's message may quote the URL). */
export function maskPass(text: string, pass: string): string {
  if (pass === "") return text;
  return text.split(pass).join("<SERVER_PASS>").split(encodeURIComponent(pass)).join("<SERVER_PASS>");
}

function pathOf(url: string): string {
  const at = url.indexOf("/", url.indexOf("//") + 2);
  return at < 0 ? "/" : url.slice(at);
}
