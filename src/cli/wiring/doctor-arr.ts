import { expectedConnection, inspectArrConnection, maskPass } from "../../arr/inspect-connection.ts";
import { createArrClient, type ArrClient } from "../../arr/arr-client.ts";
import { ArrApiError, ArrAuthError, ArrUnavailableError } from "../../arr/arr-errors.ts";
import { ARR_TYPE_FACTS } from "../../arr/arr-type.ts";
import type { ArrConfig, Config } from "../../config/schema.ts";
import { describeError } from "../../core/errors.ts";
import type { Logger } from "../../core/logger.ts";
import type { ArrAnswer, ArrProbe, ArrReach } from "../../ops/doctor/arr.ts";
import { originOf } from "../../http/http-call.ts";

/**
 * `ARR` → doctor's probes, one per app. Whether the app answers at all is asked without the key
 * (`GET {api}/system/status`, which an *arr app answers 401, or 503 while starting up) through a bare fetch, so the
 * socket's error code is kept for the diagnosis and no key can leak. The key, the version and the history are asked
 * through the backfill's own client (src/arr/arr-client.ts), whose errors are classified once; they are handed
 * to doctor as values, with every secret blanked. The connection to autoscan is judged by src/arr/inspect-connection.ts
 * against the path autoscan expects (`<SERVER_URL_BASE>/<SERVER_PASS>/<name>`): the host the app uses to reach autoscan
 * is the app's side, which doctor cannot see, so it is not compared.
 */
const MAX_LOOK_BYTES = 64 * 1024;

export function arrProbes(config: Config, log: Logger): ArrProbe[] {
  return Object.entries(config.ARR).map(([name, app]) => arrProbe(name, app, config, log));
}

function arrProbe(name: string, app: ArrConfig, config: Config, log: Logger): ArrProbe {
  const timeoutSeconds = Math.min(app.TIMEOUT, 10);
  const timeoutMs = timeoutSeconds * 1000;
  const base = app.URL.replace(/\/+$/, "");
  const secrets = [app.API_KEY, ...userinfoSecrets(base)].filter((secret) => secret.length > 0);
  const blank = (text: string): string => secrets.reduce((out, secret) => out.split(secret).join("***"), text);
  let client: ArrClient | undefined;
  const clientOf = (): ArrClient =>
    (client ??= createArrClient({ name, type: app.TYPE, url: app.URL, apiKey: app.API_KEY, timeoutMs, log: log.child({ component: "DOCTOR" }) }));
  return {
    name,
    kind: app.TYPE,
    enabled: app.BACKFILL,
    url: originOf(base),
    timeoutSeconds,
    async reach(signal) {
      try {
        return await bareLook(`${base}${ARR_TYPE_FACTS[app.TYPE].apiRoot}/system/status`, timeoutMs, signal);
      } catch (error) {
        // fetch refuses a URL with userinfo, quoting it: the message is blanked, the error (and its cause) kept.
        if (error instanceof Error && secrets.some((secret) => error.message.includes(secret))) {
          Object.defineProperty(error, "message", { value: blank(error.message), configurable: true, writable: true });
        }
        throw error;
      }
    },
    status: (signal) => answer(() => clientOf().status(signal), blank),
    history: (signal) => answer(async () => ({ totalRecords: (await clientOf().historyPage(1, 1, signal)).totalRecords }), blank),
    async connection(signal) {
      const expected = expectedConnection(name, app.TYPE, config);
      if (!expected) return undefined;
      return answer(() => inspectArrConnection(clientOf(), expected, signal), (text) => maskPass(blank(text), expected.pass));
    },
  };
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

/** One bounded call without the key; a network error or timeout is thrown as fetch throws it (the code under `cause`). */
async function bareLook(url: string, timeoutMs: number, signal: AbortSignal): Promise<ArrReach> {
  const response = await fetch(url, {
    headers: { Accept: "application/json" },
    redirect: "manual",
    signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]),
  });
  if (response.status < 500 || !response.body) {
    await response.body?.cancel().catch(() => undefined);
    return { status: response.status };
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > MAX_LOOK_BYTES) {
      await response.body.cancel().catch(() => undefined);
      break;
    }
    chunks.push(chunk);
  }
  const errorMessage = errorMessageOf(Buffer.concat(chunks).toString("utf8"));
  return errorMessage === undefined ? { status: response.status } : { status: response.status, errorMessage };
}

/** `{"errorMessage":"Sonarr is starting up, please try again later"}` (StartingUpMiddleware). */
function errorMessageOf(body: string): string | undefined {
  try {
    const parsed = JSON.parse(body) as { errorMessage?: unknown };
    return typeof parsed.errorMessage === "string" && parsed.errorMessage.trim() ? parsed.errorMessage : undefined;
  } catch {
    return undefined;
  }
}


/** A password in the URL (`http://user:pass@host`): fetch refuses such a URL with a message that quotes it. */
function userinfoSecrets(url: string): string[] {
  try {
    const { password } = new URL(url);
    return password ? [password, decodeURIComponent(password)] : [];
  } catch {
    return [];
  }
}
