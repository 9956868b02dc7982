import { createArrClient, type ArrClient } from "../../arr/arr-client.ts";
import { ArrApiError, ArrAuthError, ArrUnavailableError } from "../../arr/arr-errors.ts";
import { ARR_TYPE_FACTS, ARR_TYPES, type ArrType } from "../../arr/arr-type.ts";
import { expectedConnection, inspectArrConnection, maskPass, type ConnectionInspection } from "../../arr/inspect-connection.ts";
import type { ArrConfig, Config } from "../../config/schema.ts";
import { describeError } from "../../core/errors.ts";
import type { Logger } from "../../core/logger.ts";
import { httpCall, originOf } from "../../http/http-call.ts";
import { jsonBody } from "../../http/json-body.ts";
import { fail, ok, skip, skipAfter, warn, type CheckResult } from "./check.ts";
import { blankError, blankerOf } from "./secrets.ts";
import { unreachableCheck } from "./unreachable.ts";

/**
 * The *arr apps (`ARR`) whose history the backfill reads, each in steps, a failed step skipping the ones after it:
 * does it answer (`GET {api}/system/status` without the key, so no key can leak and the socket's error is kept for
 * unreachable.ts; 503 with the app's `errorMessage` while it starts), is the key accepted (through the backfill's
 * client, src/arr/arr-client.ts, whose errors are classified once), which app and version answered (another app than
 * `TYPE` is a warning: the history's event names and numbers differ), can the history be read (one record), and is
 * the app connected to autoscan (src/arr/inspect-connection.ts: a Webhook to `…/<SERVER_PASS>/<name>`, enabled, with
 * the events autoscan scans on, not "unavailable due to failures"; `autoscan arr connect` fixes each problem; the
 * host the app uses to reach autoscan is the app's side, which doctor cannot see). `BACKFILL` false is one skipped
 * line. Every message is blanked of the key and the URL's password.
 */
type ArrAnswer<T> =
  | { readonly ok: true; readonly value: T }
  /** `auth`: 401/403; `unavailable`: down, starting, 5xx, timeout; `api`: not what an *arr app sends. */
  | { readonly ok: false; readonly problem: "auth" | "unavailable" | "api" | "other"; readonly message: string; readonly status?: number };

interface ArrApp {
  readonly name: string;
  readonly kind: ArrType;
  readonly label: string;
  /** The URL shown: scheme, host and port only (a URL base or userinfo may carry a secret). */
  readonly url: string;
}

const PORT: Readonly<Record<ArrType, string>> = { sonarr: "8989", radarr: "7878", lidarr: "8686", readarr: "8787" };

export async function arrChecks(config: Config, log: Logger, inContainer: boolean, signal: AbortSignal): Promise<CheckResult[]> {
  // Each app on its own, at once: one that hangs costs its timeout, not the sum of them.
  return (await Promise.all(Object.entries(config.ARR).map(([name, app]) => appChecks(name, app, config, log, inContainer, signal)))).flat();
}

async function appChecks(name: string, config: ArrConfig, whole: Config, log: Logger, inContainer: boolean, signal: AbortSignal): Promise<CheckResult[]> {
  const id = `arr:${name}`;
  if (!config.BACKFILL) return [skip(id, name, `ARR.${name}.BACKFILL is false: not checked, and its history is not read.`)];
  const kind = config.TYPE;
  const label = ARR_TYPE_FACTS[kind].appName;
  const base = config.URL.replace(/\/+$/, "");
  const app: ArrApp = { name, kind, label, url: originOf(base) };
  const timeoutSeconds = Math.min(config.TIMEOUT, 10);
  const blank = blankerOf([config.API_KEY], base);
  let reach: { status: number; body: string };
  try {
    const url = `${base}${ARR_TYPE_FACTS[kind].apiRoot}/system/status`;
    const headers = { Accept: "application/json" };
    // Only a 5xx's body is read: the app's `errorMessage` ("Sonarr is starting up, please try again later").
    reach = await httpCall({ method: "GET", url, headers, timeoutMs: timeoutSeconds * 1000, maxBytes: 64 * 1024, overCap: "cut", readsBody: (s) => s >= 500, signal });
  } catch (error) {
    const server = { id, title: name, url: app.url, label, setting: `ARR.${name}.URL`, portHint: `${label} listens on ${PORT[kind]}`, example: `http://${kind}:${PORT[kind]}` };
    return [unreachableCheck({ ...server, timeoutSeconds }, blankError(error, blank), inContainer), ...skipAfter(stepsOf(name), `arr:${name}`, `${name} did not answer.`)];
  }
  if (reach.status >= 500) return [notReady(app, reach.status, errorMessageOf(reach.body)), ...skipAfter(stepsOf(name), `arr:${name}`, `${name} is not ready.`)];
  const out: CheckResult[] = [ok(id, name, `Answers at ${app.url}.`)];

  const client: ArrClient = createArrClient({ name, type: kind, url: config.URL, apiKey: config.API_KEY, timeoutMs: timeoutSeconds * 1000, log: log.child({ component: "DOCTOR" }) });
  const status = await answer(() => client.status(signal), blank);
  if (!status.ok) {
    const reason = status.problem === "auth" ? `${name} refused the key.` : "The key check failed.";
    out.push(keyFailed(app, status), ...skipAfter(stepsOf(name), `arr:${name}.key`, reason));
    return out;
  }
  const appName = shown(status.value.appName);
  out.push(ok(`${id}.key`, `${name} key`, `${appName} accepted ARR.${name}.API_KEY.`));
  out.push(versionCheck(app, appName, shown(status.value.version)));

  const history = await answer(async () => (await client.historyPage(1, 1, signal)).totalRecords, blank);
  if (history.ok) {
    const n = history.value;
    out.push(ok(`${id}.history`, `${name} history`, n === 0 ? "Readable; it holds no record yet." : `Readable; it holds ${n.toLocaleString("en-US")} record${n === 1 ? "" : "s"}.`));
  } else {
    const fix =
      history.problem === "auth"
        ? `The key may not read the history: ${keyFix(app)}`
        : `Check ${label}'s log (System → Logs), and that ARR.${name}.URL points at ${label} itself.`;
    out.push(fail(`${id}.history`, `${name} history`, `Reading one page of the history failed: ${history.message}`, fix));
  }
  const expected = expectedConnection(name, kind, whole);
  const connection = expected && (await answer(() => inspectArrConnection(client, expected, signal), (text) => maskPass(blank(text), expected.pass)));
  out.push(connectionCheck(app, connection));
  return out;
}

async function answer<T>(call: () => Promise<T>, blank: (text: string) => string): Promise<ArrAnswer<T>> {
  try {
    return { ok: true, value: await call() };
  } catch (error) {
    const message = blank(describeError(error));
    const status = (error as { status?: unknown }).status;
    const problem =
      error instanceof ArrAuthError ? "auth" : error instanceof ArrUnavailableError ? "unavailable" : error instanceof ArrApiError ? "api" : "other";
    return { ok: false, problem, message, ...(typeof status === "number" ? { status } : {}) };
  }
}

/** Whether the app sends its events to autoscan, and what to do when it does not (undefined: SERVER_PASS is not set). */
function connectionCheck(app: ArrApp, answer: ArrAnswer<ConnectionInspection> | undefined): CheckResult {
  const { name, label } = app;
  const id = `arr:${name}.connection`;
  const title = `${name} connection`;
  if (answer === undefined) return skip(id, title, "SERVER_PASS is not set: there is no webhook URL to look for.");
  if (!answer.ok) {
    const fix = answer.problem === "auth" ? `The key may not read the connections: ${keyFix(app)}` : `Check ${label}'s log (System → Logs).`;
    return fail(id, title, `Reading ${label}'s connections failed: ${answer.message}`, fix);
  }
  const { state, detail, duplicates } = answer.value;
  const command = `autoscan arr connect --app ${/^[\w.-]+$/.test(name) ? name : `'${name}'`}`;
  switch (state) {
    case "ok":
      return duplicates.length === 0
        ? ok(id, title, detail)
        : warn(id, title, detail, `Remove the extra connections in ${label} (Settings → Connect); keep ${duplicates.length === 1 ? "one" : "the first"}.`);
    case "missing":
      return fail(
        id,
        title,
        `${detail} Imports reach autoscan only through the backfill.`,
        `Run '${command}': it creates the connection and has ${label} test it (or add it by hand: ${label}, Settings → ` +
          `Connect → + → Webhook, with the URL 'autoscan webhook-url' prints).`,
      );
    case "failing":
      return fail(
        id,
        title,
        detail,
        `Check that autoscan runs and that ${label} reaches it, then run '${command}': a passed test lets ${label} send again (so does Test on the connection in ${label}).`,
      );
    case "wrong-events":
      return warn(id, title, detail, `Run '${command}' to tick them, or tick them in ${label}, Settings → Connect.`);
    default:
      return fail(id, title, detail, `Run '${command}' to fix it, or edit it in ${label}, Settings → Connect.`);
  }
}

/** A 5xx to the call without the key: starting up (the app says so), or a proxy in front of a stopped app. */
function notReady({ name, url, label }: ArrApp, status: number, errorMessage: string | undefined): CheckResult {
  const said = errorMessage === undefined ? undefined : shown(errorMessage);
  if (said !== undefined && /starting/i.test(said)) {
    return fail(
      `arr:${name}`,
      name,
      `${label} at ${url} is starting up (${status}: "${said}").`,
      `Wait until it has started, then run 'autoscan doctor' again; if it stays so, check ${label}'s log.`,
    );
  }
  return fail(
    `arr:${name}`,
    name,
    `Something answers at ${url}, but with ${status}${said ? ` ("${said}")` : ""}: ${label} is not serving its API.`,
    `Check that ${label} runs (its log), and any proxy in front of it; else correct ARR.${name}.URL.`,
  );
}

function keyFailed(app: ArrApp, answer: Extract<ArrAnswer<unknown>, { ok: false }>): CheckResult {
  const { name, url, label } = app;
  const id = `arr:${name}.key`;
  const title = `${name} key`;
  if (answer.problem === "auth") return fail(id, title, `${label} rejected ARR.${name}.API_KEY (${answer.status ?? 401} at ${url}).`, keyFix(app));
  return fail(
    id,
    title,
    `${name} answers, but the check with the key failed: ${answer.message}`,
    answer.problem === "unavailable"
      ? `Try again once ${label} is up; if it stays so, check ${label}'s log.`
      : `Check that ARR.${name}.URL points at ${label} itself (with its URL base, if it has one: Settings → General → URL Base).`,
  );
}

function keyFix({ name, label }: ArrApp): string {
  return `Set ARR.${name}.API_KEY to ${label}'s API key: in ${label}, Settings → General → Security → API Key.`;
}

/** The app that answered against `TYPE`: the history's event names and numbers are read by the type. */
function versionCheck({ name, kind, url, label }: ArrApp, appName: string, version: string): CheckResult {
  const id = `arr:${name}.version`;
  const title = `${name} version`;
  if (appName.toLowerCase() === label.toLowerCase()) return ok(id, title, `${appName} ${version}.`);
  const other = ARR_TYPES.find((type) => ARR_TYPE_FACTS[type].appName.toLowerCase() === appName.toLowerCase());
  if (other) {
    return warn(
      id,
      title,
      `ARR.${name}.TYPE is "${kind}", but the app at ${url} is ${appName} ${version}: its history would be read with ${label}'s event names.`,
      `Set ARR.${name}.TYPE to "${other}", or ARR.${name}.URL to ${label}'s address.`,
    );
  }
  return warn(
    id,
    title,
    `The app at ${url} says it is '${appName}' ${version}, not ${label}.`,
    `Point ARR.${name}.URL at ${label}: autoscan reads the history of Sonarr, Radarr, Lidarr and Readarr only.`,
  );
}

/** An app's checks in order (id → title): a failed one skips those after it. */
function stepsOf(name: string): Record<string, string> {
  const steps = ["key", "version", "history", "connection"].map((step) => [`arr:${name}.${step}`, `${name} ${step}`]);
  return Object.fromEntries([[`arr:${name}`, name], ...steps]);
}

/** `{"errorMessage":"Sonarr is starting up, please try again later"}` (StartingUpMiddleware). */
function errorMessageOf(body: string): string | undefined {
  const said = (jsonBody(body) as { errorMessage?: unknown } | null | undefined)?.errorMessage;
  return typeof said === "string" && said.trim() ? said : undefined;
}

/** Text the app sent, for a one-line message: control characters dropped, at most 80 characters. */
function shown(text: string): string {
  const line = text.replace(/[\u0000-\u001f\u007f]+/g, " ").trim();
  return line.length > 80 ? `${line.slice(0, 77)}...` : line;
}
