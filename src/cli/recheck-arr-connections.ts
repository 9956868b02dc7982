import type { Config } from "../config/schema.ts";
import { httpCall } from "../http/http-call.ts";
import { jsonBody } from "../http/json-body.ts";
import { connectHost } from "../ops/doctor/running-server.ts";
import type { CommandIO } from "./command.ts";

/**
 * After `autoscan arr connect` made connections right: the running server (at SERVER_IP:SERVER_PORT, under
 * SERVER_URL_BASE, as `autoscan backfill` reaches it) looks at those apps now (`cmd=arr_check`), so its warning that
 * an app does not send — the console's banner, a notification not sent yet — ends at once rather than at the next
 * look, up to SERVER_BACKFILL_INTERVAL later. One line on stderr per app whose warning ended, or that the server
 * still sees a problem with. No server running (or an older one): nothing to tell, nothing said.
 */
export async function recheckArrConnections(
  config: Pick<Config, "SERVER_IP" | "SERVER_PORT" | "SERVER_URL_BASE" | "SERVER_PASS">,
  apps: readonly string[],
  io: Pick<CommandIO, "stderr" | "shutdownSignal">,
): Promise<void> {
  if (apps.length === 0 || config.SERVER_PASS === "") return;
  const host = connectHost(config.SERVER_IP);
  const base = `http://${host.includes(":") ? `[${host}]` : host}:${String(config.SERVER_PORT)}${config.SERVER_URL_BASE}`;
  const answers = await Promise.all(apps.map((app) => ask(`${base}/api/${encodeURIComponent(config.SERVER_PASS)}`, app, io.shutdownSignal)));
  for (const check of answers.flat()) {
    if (check.cleared) io.stderr.write(`${check.app}: the running autoscan sees it sending again; its warning is cleared.\n`);
    else if (!["ok", "wrong-events", "unknown"].includes(check.state)) io.stderr.write(`${check.app}: the running autoscan still sees a problem: ${check.detail}\n`);
  }
}

interface Check {
  readonly app: string;
  readonly state: string;
  readonly detail: string;
  readonly cleared: boolean;
}

/** The server's looks at one app: its apps are asked in parallel, each within its TIMEOUT (at most 10 s). */
const ASK_TIMEOUT_MS = 15_000;

async function ask(url: string, app: string, signal: AbortSignal | undefined): Promise<Check[]> {
  const answer = await httpCall({
    method: "POST",
    url,
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ cmd: "arr_check", app }).toString(),
    timeoutMs: ASK_TIMEOUT_MS,
    maxBytes: 256 * 1024,
    ...(signal ? { signal } : {}),
  }).catch(() => undefined);
  const body = answer?.status === 200 ? (jsonBody(answer.body) as { success?: unknown; apps?: unknown } | undefined) : undefined;
  if (body?.success !== true || !Array.isArray(body.apps)) return [];
  return (body.apps as Partial<Check>[]).flatMap((check) =>
    typeof check.app === "string" && typeof check.state === "string" && typeof check.detail === "string"
      ? [{ app: check.app, state: check.state, detail: check.detail, cleared: check.cleared === true }]
      : [],
  );
}
