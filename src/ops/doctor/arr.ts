import type { ConnectionInspection } from "../../arr/inspect-connection.ts";
import { fail, ok, skip, warn, type CheckResult } from "./check.ts";
import type { CheckFamily } from "./run-checks.ts";
import { unreachableCheck } from "./unreachable.ts";

/**
 * The *arr apps (`ARR`) whose history the backfill reads, each in four steps, a failed step skipping the ones after it:
 * - does it answer (a call without the key; if not, the likely cause, in the words every family uses: unreachable.ts),
 *   or is it still starting up (503 with the app's `errorMessage`);
 * - is the key accepted (`GET …/system/status` with it: 401 names `ARR.<name>.API_KEY` and where the app shows it);
 * - which app and version answered (another app than `TYPE` says, e.g. a Radarr URL under a sonarr TYPE, is a
 *   warning: the history's event names and numbers differ between the apps);
 * - can the history be read (one page of one record);
 * - is the app connected to autoscan (src/arr/inspect-connection.ts): a Webhook connection to `…/<SERVER_PASS>/<name>`
 *   that is enabled, ticks the events autoscan scans on, and is not on the app's health list as "unavailable due to
 *   failures"; each problem names `autoscan arr connect`, which fixes it.
 * An app with `BACKFILL` false is one skipped line. The probes (cli/wiring/doctor-arr.ts) own the key and the client:
 * nothing here sees a key, and what they hand back is already classified.
 */
export type ArrKind = "sonarr" | "radarr" | "lidarr" | "readarr";

/** The answer to a call without the key (any HTTP answer: something listens). */
export interface ArrReach {
  readonly status: number;
  /** The app's own `errorMessage` (503 while starting up: "Sonarr is starting up, please try again later"). */
  readonly errorMessage?: string;
}

/** A call with the key, classified where the answer entered (the history client). */
export type ArrAnswer<T> =
  | { readonly ok: true; readonly value: T }
  | {
      readonly ok: false;
      /** `auth`: 401/403; `unavailable`: down, starting, 5xx, timeout; `api`: not what an *arr app sends. */
      readonly problem: "auth" | "unavailable" | "api" | "other";
      /** Already free of the key. */
      readonly message: string;
      readonly status?: number;
    };

export interface ArrStatusValue {
  readonly appName: string;
  readonly version: string;
}

export interface ArrProbe {
  /** The key in `ARR`. */
  readonly name: string;
  readonly kind: ArrKind;
  /** `ARR.<name>.BACKFILL`. */
  readonly enabled: boolean;
  /** The URL shown: scheme, host and port only (a URL base or userinfo may carry a secret). */
  readonly url: string;
  /** How long one call may take, for the message (the probe enforces it). */
  readonly timeoutSeconds: number;
  /** A call without the key. Rejects with the network error (its `cause` kept) when nothing answers. */
  reach(signal: AbortSignal): Promise<ArrReach>;
  /** `GET …/system/status` with the key. */
  status(signal: AbortSignal): Promise<ArrAnswer<ArrStatusValue>>;
  /** `GET …/history`, one page of one record, with the key. */
  history(signal: AbortSignal): Promise<ArrAnswer<{ readonly totalRecords: number }>>;
  /** The app's connection to autoscan, judged; undefined when SERVER_PASS is not set (no URL to look for). */
  connection(signal: AbortSignal): Promise<ArrAnswer<ConnectionInspection> | undefined>;
}

export interface ArrCheckOptions {
  readonly apps: readonly ArrProbe[];
  /** Whether autoscan runs inside a container; injected for tests. */
  readonly inContainer: boolean;
}

const LABEL: Readonly<Record<ArrKind, string>> = { sonarr: "Sonarr", radarr: "Radarr", lidarr: "Lidarr", readarr: "Readarr" };
const PORT: Readonly<Record<ArrKind, string>> = { sonarr: "8989", radarr: "7878", lidarr: "8686", readarr: "8787" };

export function arrFamily(options: ArrCheckOptions): CheckFamily {
  return { name: "arr", run: (_findings, signal) => arrChecks(options, signal) };
}

export async function arrChecks(options: ArrCheckOptions, signal: AbortSignal): Promise<CheckResult[]> {
  // Each app on its own, at once: one that hangs costs its timeout, not the sum of them.
  const results = await Promise.all(options.apps.map((probe) => appChecks(probe, options.inContainer, signal)));
  return results.flat();
}

async function appChecks(probe: ArrProbe, inContainer: boolean, signal: AbortSignal): Promise<CheckResult[]> {
  const { name, kind } = probe;
  const id = `arr:${name}`;
  const label = LABEL[kind];
  if (!probe.enabled) return [skip(id, name, `ARR.${name}.BACKFILL is false: not checked, and its history is not read.`)];

  let reach: ArrReach;
  try {
    reach = await probe.reach(signal);
  } catch (error) {
    const server = {
      id,
      title: name,
      url: probe.url,
      label,
      setting: `ARR.${name}.URL`,
      portHint: `${label} listens on ${PORT[kind]}`,
      example: `http://${kind}:${PORT[kind]}`,
      timeoutSeconds: probe.timeoutSeconds,
    };
    return [unreachableCheck(server, error, inContainer), ...skipRest(name, `${name} did not answer.`)];
  }
  if (reach.status >= 500) return [notReady(probe, reach), ...skipRest(name, `${name} is not ready.`)];
  const out: CheckResult[] = [ok(id, name, `Answers at ${probe.url}.`)];

  const status = await probe.status(signal);
  if (!status.ok) {
    out.push(keyFailed(probe, status), ...skipRest(name, status.problem === "auth" ? `${name} refused the key.` : "The key check failed.", false));
    return out;
  }
  const { appName, version } = status.value;
  const app = shown(appName);
  out.push(ok(`${id}.key`, `${name} key`, `${app} accepted ARR.${name}.API_KEY.`));
  out.push(versionCheck(probe, app, shown(version)));

  const history = await probe.history(signal);
  if (history.ok) {
    const n = history.value.totalRecords;
    out.push(ok(`${id}.history`, `${name} history`, n === 0 ? "Readable; it holds no record yet." : `Readable; it holds ${n.toLocaleString("en-US")} record${n === 1 ? "" : "s"}.`));
  } else {
    out.push(
      fail(
        `${id}.history`,
        `${name} history`,
        `Reading one page of the history failed: ${history.message}`,
        history.problem === "auth"
          ? `The key may not read the history: ${keyFix(probe)}`
          : `Check ${label}'s log (System → Logs), and that ARR.${name}.URL points at ${label} itself.`,
      ),
    );
  }
  out.push(connectionCheck(probe, await probe.connection(signal)));
  return out;
}

/** Whether the app sends its events to autoscan, and what to do when it does not. */
function connectionCheck(probe: ArrProbe, answer: ArrAnswer<ConnectionInspection> | undefined): CheckResult {
  const { name } = probe;
  const label = LABEL[probe.kind];
  const id = `arr:${name}.connection`;
  const title = `${name} connection`;
  if (answer === undefined) return skip(id, title, "SERVER_PASS is not set: there is no webhook URL to look for.");
  if (!answer.ok) {
    return fail(
      id,
      title,
      `Reading ${label}'s connections failed: ${answer.message}`,
      answer.problem === "auth" ? `The key may not read the connections: ${keyFix(probe)}` : `Check ${label}'s log (System → Logs).`,
    );
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
function notReady(probe: ArrProbe, reach: ArrReach): CheckResult {
  const { name, url } = probe;
  const label = LABEL[probe.kind];
  const said = reach.errorMessage === undefined ? undefined : shown(reach.errorMessage);
  if (said !== undefined && /starting/i.test(said)) {
    return fail(
      `arr:${name}`,
      name,
      `${label} at ${url} is starting up (${reach.status}: "${said}").`,
      `Wait until it has started, then run 'autoscan doctor' again; if it stays so, check ${label}'s log.`,
    );
  }
  return fail(
    `arr:${name}`,
    name,
    `Something answers at ${url}, but with ${reach.status}${said ? ` ("${said}")` : ""}: ${label} is not serving its API.`,
    `Check that ${label} runs (its log), and any proxy in front of it; else correct ARR.${name}.URL.`,
  );
}

function keyFailed(probe: ArrProbe, answer: Extract<ArrAnswer<unknown>, { ok: false }>): CheckResult {
  const { name, url } = probe;
  const label = LABEL[probe.kind];
  const id = `arr:${name}.key`;
  const title = `${name} key`;
  if (answer.problem === "auth") {
    return fail(id, title, `${label} rejected ARR.${name}.API_KEY (${answer.status ?? 401} at ${url}).`, keyFix(probe));
  }
  return fail(
    id,
    title,
    `${name} answers, but the check with the key failed: ${answer.message}`,
    answer.problem === "unavailable"
      ? `Try again once ${label} is up; if it stays so, check ${label}'s log.`
      : `Check that ARR.${name}.URL points at ${label} itself (with its URL base, if it has one: Settings → General → URL Base).`,
  );
}

function keyFix(probe: ArrProbe): string {
  const label = LABEL[probe.kind];
  return `Set ARR.${probe.name}.API_KEY to ${label}'s API key: in ${label}, Settings → General → Security → API Key.`;
}

/** The app that answered against `TYPE`: the history's event names and numbers are read by the type. */
function versionCheck(probe: ArrProbe, appName: string, version: string): CheckResult {
  const { name, kind, url } = probe;
  const id = `arr:${name}.version`;
  const title = `${name} version`;
  const label = LABEL[kind];
  if (appName.toLowerCase() === label.toLowerCase()) return ok(id, title, `${appName} ${version}.`);
  const other = (Object.keys(LABEL) as ArrKind[]).find((k) => LABEL[k].toLowerCase() === appName.toLowerCase());
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

function skipRest(name: string, reason: string, withKey = true): CheckResult[] {
  const out: CheckResult[] = [];
  if (withKey) out.push(skip(`arr:${name}.key`, `${name} key`, reason));
  out.push(
    skip(`arr:${name}.version`, `${name} version`, reason),
    skip(`arr:${name}.history`, `${name} history`, reason),
    skip(`arr:${name}.connection`, `${name} connection`, reason),
  );
  return out;
}

/** Text the app sent, for a one-line message: control characters dropped, at most 80 characters. */
function shown(text: string): string {
  const line = text.replace(/[\u0000-\u001f\u007f]+/g, " ").trim();
  return line.length > 80 ? `${line.slice(0, 77)}...` : line;
}
