import type { ArrClient } from "./arr-client.ts";
import { ARR_TYPE_FACTS } from "./arr-type.ts";
import { describeError } from "../core/errors.ts";
import { ArrUnavailableError } from "./arr-errors.ts";
import { serviceNameAdvice, unresolvedHost } from "./reach-advice.ts";
import { CONNECTION_NAME, EVENT_FLAGS, GRAB_FLAG, METHOD_POST } from "./connection-facts.ts";
import {
  findConnections,
  grabIsOn,
  isFailing,
  label,
  maskPass,
  maskUrl,
  methodIsPost,
  missingEvents,
  sends,
  urlIsRight,
  type ExpectedConnection,
  type FoundConnection,
} from "./inspect-connection.ts";
import {
  createNotification,
  fieldValue,
  listNotifications,
  readHealth,
  testNotification,
  updateNotification,
  webhookTemplate,
  withField,
  type NotificationResource,
} from "./notification-api.ts";

/**
 * `autoscan arr connect` for one app: make sure it has exactly one Webhook connection to autoscan, create it or fix
 * the one there (its URL, method POST, the events autoscan scans on ticked, On Grab off), then ask the app to test
 * it. Nothing of the user's is deleted: other connections that also send to autoscan are named as duplicates; a
 * connection's other settings (its name, tags, other events, username, password, headers) are kept as they are.
 *
 * The apps test an enabled connection before they save it (`ProviderControllerBase.CreateProvider`/`UpdateProvider`),
 * so a connection to an address the app cannot reach is refused rather than saved: the refusal, in the app's words,
 * is the outcome. A passed test of a saved connection also ends the app's hold on it after failed deliveries.
 */
export type ConnectResult = "created" | "fixed" | "right" | "failed";

export interface ConnectOutcome {
  readonly result: ConnectResult;
  /** One line, without the app's name: `created 'autoscan' (id 4) → http://…/<SERVER_PASS>/sonarr; the test passed`. */
  readonly line: string;
  /** Further lines (duplicates, a hold ended), for stderr. */
  readonly notes: readonly string[];
}

export async function connectApp(client: ArrClient, expected: ExpectedConnection, dryRun: boolean, signal?: AbortSignal): Promise<ConnectOutcome> {
  const app = ARR_TYPE_FACTS[expected.type].appName;
  const notes: string[] = [];
  const done = (result: ConnectResult, line: string): ConnectOutcome => ({ result, line, notes });
  /** `failed: <what>: <the app's words>`, SERVER_PASS masked, with what to check when the app could not deliver. */
  const refused = (what: string, refusal: string): ConnectOutcome => done("failed", `failed: ${what}: ${because(app, expected, refusal)}`);
  try {
    const list = await listNotifications(client, signal);
    const found = findConnections(list, expected);
    if (found.duplicates.length) {
      notes.push(
        `${found.duplicates.length === 1 ? "another connection also sends" : `${found.duplicates.length} other connections also send`} to autoscan: ` +
          `${found.duplicates.map(label).join(", ")}; left as they are (autoscan deletes nothing of yours). Each event reaches autoscan once per ` +
          `connection: remove the extra ones in ${app}, Settings → Connect.`,
      );
    }
    const { connection } = found;
    if (!connection) {
      const name = freeName(list);
      const shown = maskUrl(expected.url, expected);
      if (dryRun) return done("created", `would create '${name}' → ${shown} (POST; ${EVENT_FLAGS[expected.type].map((event) => event.label).join(", ")})`);
      const saved = await createNotification(client, newResource(await webhookTemplate(client, signal), name, expected), signal);
      if (!saved.ok) return refused(`${app} refused to create '${name}' → ${shown}`, saved.refusal);
      const it = `'${name}'${saved.value.id === undefined ? "" : ` (id ${saved.value.id})`}`;
      const test = await testNotification(client, saved.value, signal);
      if (!test.ok) return refused(`created ${it} → ${shown}, but ${app}'s test failed`, test.refusal);
      return done("created", `created ${it} → ${shown}; the test passed`);
    }

    const it = label(connection);
    const changes = plan(connection, expected);
    // The health list only adds a note here: one the app cannot give does not stop the connection being made right.
    if (isFailing(await readHealth(client, signal).catch(() => []), connection)) {
      notes.push(`${app} had stopped sending to ${it} after failed deliveries${dryRun ? "" : "; a passed test lets it send again"}.`);
    }
    if (changes.list.length === 0) {
      const shown = maskUrl(connection.url, expected);
      if (dryRun) return done("right", `already right: ${it} → ${shown} (not tested: --dry-run)`);
      const test = await testNotification(client, connection.resource, signal);
      if (!test.ok) return refused(`${it} is right, but ${app}'s test of it failed`, test.refusal);
      return done("right", `already right: ${it} → ${shown}; the test passed`);
    }
    const what = changes.list.join("; ");
    if (dryRun) return done("fixed", `would fix ${it}: ${what}`);
    if (connection.id === undefined) return done("failed", `failed: ${it} has no id to update it by`);
    const saved = await updateNotification(client, connection.id, changes.resource, signal);
    if (!saved.ok) return refused(`${app} refused the fix of ${it} (${what})`, saved.refusal);
    const test = await testNotification(client, { ...saved.value, id: connection.id }, signal);
    if (!test.ok) return refused(`fixed ${it} (${what}), but ${app}'s test failed`, test.refusal);
    return done("fixed", `fixed ${it}: ${what}; the test passed`);
  } catch (error) {
    const words = maskPass(describeError(error), expected.pass);
    // autoscan itself cannot find the app: the fix is the app's address under ARR, not autoscan's.
    const host = error instanceof ArrUnavailableError ? unresolvedHost(words) : undefined;
    const hint =
      host === undefined
        ? ""
        : ` (autoscan cannot find the host${host ? ` '${host}'` : ""} from where this command runs: run it where that name resolves (in Docker: ` +
          `docker exec autoscan autoscan arr connect), or set ARR.${expected.name}.URL to an address it reaches, such as the app's LAN address and port)`;
    return done("failed", `failed: ${words}${hint}`);
  }
}

/** A new connection from the app's blank Webhook: autoscan's name, URL, POST, its events on and Grab off. */
function newResource(template: NotificationResource, name: string, expected: ExpectedConnection): NotificationResource {
  const resource: NotificationResource = { ...withField(withField(template, "url", expected.url), "method", METHOD_POST), name };
  delete resource.presets;
  delete resource.id;
  resource[GRAB_FLAG] = false;
  for (const { flag } of EVENT_FLAGS[expected.type]) resource[flag] = true;
  return resource;
}

/** What to change in autoscan's connection, in words, and the resource with the changes made. */
function plan(connection: FoundConnection, expected: ExpectedConnection): { list: string[]; resource: NotificationResource } {
  const list: string[] = [];
  let resource: NotificationResource = { ...connection.resource };
  if (!urlIsRight(connection.url, expected)) {
    const to = newUrl(connection, expected);
    list.push(`URL ${connection.url ? maskUrl(connection.url, expected) : "(none)"} → ${maskUrl(to, expected)}`);
    resource = withField(resource, "url", to);
  }
  if (!methodIsPost(resource)) {
    list.push(`method ${methodName(fieldValue(resource, "method"))} → POST`);
    resource = withField(resource, "method", METHOD_POST);
  }
  const wasOff = !sends(resource);
  const missing = missingEvents(resource, expected.type);
  if (missing.length) {
    list.push(`${wasOff ? "enabled: " : ""}ticked ${missing.map((event) => event.label).join(", ")}`);
    for (const { flag } of missing) resource[flag] = true;
  }
  if (grabIsOn(resource)) {
    list.push("On Grab off (nothing to scan yet at a grab)");
    resource[GRAB_FLAG] = false;
  }
  return { list, resource };
}

/**
 * The URL a fix gives: the expected one; but a connection that already carries SERVER_PASS keeps its own address
 * (the one the app has been reaching autoscan at) unless `--url` was given.
 */
function newUrl(connection: FoundConnection, expected: ExpectedConnection): string {
  if (expected.strictHost || (connection.match !== "pass" && connection.match !== "path")) return expected.url;
  try {
    const have = new URL(connection.url);
    const want = new URL(expected.url);
    return `${have.origin}${want.pathname}`;
  } catch {
    return expected.url;
  }
}

function methodName(value: unknown): string {
  return Number(value) === 2 ? "PUT" : JSON.stringify(value);
}

/**
 * A name for a new connection: "autoscan", unless one of the user's connections (of another kind, or to another
 * address) has it; the apps refuse a second connection of the same name, in any case ("Should be unique").
 */
function freeName(list: readonly NotificationResource[]): string {
  const taken = new Set(list.map((resource) => (resource.name ?? "").toLowerCase()));
  for (let n = 1; ; n += 1) {
    const name = n === 1 ? CONNECTION_NAME : `${CONNECTION_NAME} ${n}`;
    if (!taken.has(name)) return name;
  }
}

/**
 * The app's words for a refusal, SERVER_PASS masked (its messages quote the URL); when it is about the delivery, what
 * to check: the app tests by sending to the URL, from where it runs.
 */
function because(app: string, expected: ExpectedConnection, refusal: string): string {
  const words = maskPass(refusal, expected.pass);
  const unresolved = unresolvedHost(refusal);
  if (unresolved !== undefined) return `${words} (${cannotResolve(app, expected, unresolved)})`;
  if (!/unable to (send|post)|webhook|connection|refused|timed out|resolve|HTTP request failed|name or service/i.test(refusal)) return words;
  const url = maskUrl(expected.url, expected);
  return (
    `${words} (${app} sends a test to the URL before it saves a connection: is 'autoscan server' running, and does ${app} reach it ` +
    `at ${url}? --url sets the address ${app} should use.)`
  );
}

/**
 * The app could not resolve the host of the URL it tested: the fix is the address it should use (`--url`), with
 * webhook-url's advice when that host is the compose service name 'autoscan'.
 */
function cannotResolve(app: string, expected: ExpectedConnection, said: string): string {
  let url: URL | undefined;
  try {
    url = new URL(expected.url);
  } catch {
    url = undefined;
  }
  const host = said || url?.hostname || "";
  const port = url?.port || (url?.protocol === "https:" ? "443" : "80");
  const lead = `${app} cannot find the host '${host}' from where it runs, so it cannot send to autoscan there`;
  if (host.toLowerCase() === "autoscan") return `${lead}. ${serviceNameAdvice("autoscan arr connect --url", port)}`;
  return `${lead}: give the address ${app} reaches autoscan at with --url, e.g. autoscan arr connect --url 192.168.1.10:${port}`;
}
