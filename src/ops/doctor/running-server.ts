import { connect } from "node:net";
import type { Config } from "../../config/schema.ts";
import { httpCall, httpReason, type HttpAnswer } from "../../http/http-call.ts";
import { jsonBody } from "../../http/json-body.ts";
import { UNROUTABLE_MARK } from "../../paths/unroutable.ts";
import { fail, ok, warn, type CheckResult } from "./check.ts";
import { refusedNowMapped, type RefusedRow } from "./mappings.ts";

/**
 * The server that may run beside doctor, at SERVER_IP:SERVER_PORT: whether its address is free, or taken by an
 * autoscan already running (doctor is often run beside the server: that is fine), or taken by something else (the
 * server could not start: an error); its `/health` (read by the notify and watch checks); and the requests it refused
 * at intake because no server can scan them (no `SERVER_PATH_MAPPINGS` form, no library), from its History.
 */
type ServerAddress = Pick<Config, "SERVER_IP" | "SERVER_PORT">;

/** Where to look for a server bound to `ip`: a wildcard address is reached on loopback. */
export function connectHost(ip: string): string {
  if (ip === "" || ip === "0.0.0.0") return "127.0.0.1";
  if (ip === "::" || ip === "[::]") return "::1";
  return ip.replace(/^\[|\]$/g, "");
}

function serverUrl(config: ServerAddress): string {
  const host = connectHost(config.SERVER_IP);
  return `http://${host.includes(":") ? `[${host}]` : host}:${String(config.SERVER_PORT)}`;
}

/**
 * The running server's `/health` body (a 503 is an answer too: the queue cannot write, and the rest of the detail
 * still holds); `undefined` when no autoscan answers at the configured port.
 */
export async function readServerHealth(config: ServerAddress): Promise<Record<string, unknown> | undefined> {
  const answer = await httpCall({ method: "GET", url: `${serverUrl(config)}/health`, timeoutMs: 3000, maxBytes: 1024 * 1024 }).catch(() => undefined);
  return answer?.status === 200 || answer?.status === 503 ? healthOf(answer.body) : undefined;
}

/** autoscan's /health: `{"status":"ok"|"starting"|"error", …}`; undefined for anything else. */
function healthOf(text: string): Record<string, unknown> | undefined {
  const body = jsonBody(text) as Record<string, unknown> | null | undefined;
  return typeof body?.status === "string" ? body : undefined;
}

/**
 * `serverExpected`: the server should be answering there (doctor run in the container whose main process is `autoscan
 * server`), so a free port is an error: the port Docker publishes leads nowhere. Otherwise a free port is one the
 * server can take.
 */
export async function portCheck(config: ServerAddress, options: { readonly serverExpected?: boolean; readonly timeoutMs?: number } = {}): Promise<CheckResult> {
  const timeoutMs = options.timeoutMs ?? 3000;
  const where = `${config.SERVER_IP}:${config.SERVER_PORT}`;
  const id = "server.port";
  const title = "Server port";
  const state = await probeTcp(connectHost(config.SERVER_IP), config.SERVER_PORT, timeoutMs);
  if (state === "free" && options.serverExpected) {
    return fail(
      id,
      title,
      `Nothing answers on ${where} in this container, where its server should listen (SERVER_PORT ${String(config.SERVER_PORT)}): every webhook to the port Docker publishes fails.`,
      "Read why the server is not listening there: 'docker logs autoscan' (a start that failed, or a SERVER_PORT or SERVER_IP in the environment that moved it).",
    );
  }
  if (state === "free") return ok(id, title, `Nothing listens on ${where} yet: the server can take it.`);
  if (state !== "open") {
    return warn(id, title, `Could not tell whether ${where} is free (${state}).`, "Check SERVER_IP: it must be an address of this machine, or 0.0.0.0.");
  }
  const noAnswer = (error: unknown): HttpAnswer => ({ status: 0, body: httpReason(error) });
  const answer = await httpCall({ method: "GET", url: `${serverUrl(config)}/health`, timeoutMs, maxBytes: 64 * 1024 }).catch(noAnswer);
  const health = healthOf(answer.body)?.status;
  if (health === "ok" || health === "starting" || health === "error") return ok(id, title, `An autoscan is already running on ${where} (/health: ${health}).`);
  const said = answer.status === 0 ? `no HTTP answer (${answer.body})` : `/health answered ${answer.status}`;
  return fail(
    id,
    title,
    `Something else listens on ${where} (${said}): the server cannot start there.`,
    `Stop that service, or set SERVER_PORT to a free port (and the port in your webhook URLs).`,
  );
}

function probeTcp(host: string, port: number, timeoutMs: number): Promise<"open" | "free" | string> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (result: string): void => {
      socket.destroy();
      resolve(result);
    };
    socket.setTimeout(timeoutMs, () => done("no answer"));
    socket.once("connect", () => done("open"));
    socket.once("error", (error: NodeJS.ErrnoException) => done(error.code === "ECONNREFUSED" ? "free" : (error.code ?? error.message)));
  });
}

/** The History's failed rows refused at intake ("Not queued: …"), newest first; no line when no server answers here. */
export async function refusedChecks(config: ServerAddress & Pick<Config, "SERVER_URL_BASE" | "SERVER_PASS" | "SERVER_PATH_MAPPINGS">): Promise<CheckResult[]> {
  const url = `${serverUrl(config)}${config.SERVER_URL_BASE}/api/${encodeURIComponent(config.SERVER_PASS)}?cmd=history&state=failed&limit=500`;
  const answer = await httpCall({ method: "GET", url, timeoutMs: 3000, maxBytes: 4 * 1024 * 1024 }).catch(() => undefined);
  if (answer?.status !== 200) return [];
  const body = jsonBody(answer.body) as { history?: ({ lastError?: string | null; finishedAt?: string | null } & RefusedRow)[] } | null | undefined;
  if (body == null) return [];
  const recent = (body.history ?? []).filter((item) => item.lastError?.startsWith(UNROUTABLE_MARK));
  const id = "intake.refused";
  const title = "Unmapped paths";
  if (recent.length === 0) return [ok(id, title, "No request was refused for lack of a mapping or a library.")];
  const listed = recent.slice(0, 5).map((r) => `${r.finishedAt ?? ""}: ${(r.lastError ?? "").replace(/^Not queued: /, "")}`);
  // Those config.json's mappings reach now: the fix is done, only the retry is left.
  const reached = refusedNowMapped(recent, config.SERVER_PATH_MAPPINGS);
  if (reached > 0) {
    const retryUrl = `${serverUrl(config)}${config.SERVER_URL_BASE}/api/<SERVER_PASS>?cmd=retry_unmapped`;
    return [
      warn(
        id,
        title,
        `${String(recent.length)} request(s) were refused for lack of a mapping; SERVER_PATH_MAPPINGS in config.json reaches ${String(reached)} of them now. Last: ${listed.join(" | ")}`,
        `Retry them: the console's "Retry the unmapped requests" button (Queue or History page), or curl -X POST '${retryUrl}'; each waits under its mapped folder. ` +
          "If you have just edited config.json, reload it first (docker kill -s HUP autoscan, or systemctl reload autoscan).",
      ),
    ];
  }
  return [
    warn(
      id,
      title,
      `${String(recent.length)} request(s) were not queued: their path matches no SERVER_PATH_MAPPINGS form and lies in no library. Last: ${listed.join(" | ")}`,
      "Add each app's path form to SERVER_PATH_MAPPINGS under the folder Plex uses (the reason names the nearest form; 'autoscan sections' lists Plex's folders), reload the config (docker kill -s HUP autoscan, or systemctl reload autoscan), then press \"Retry the unmapped requests\" on the console (or Retry each in History).",
    ),
  ];
}
