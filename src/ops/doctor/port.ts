import { connect } from "node:net";
import { fail, ok, warn, type CheckResult } from "./check.ts";
import type { CheckFamily } from "./run-checks.ts";
import { httpCall, httpReason } from "../../http/http-call.ts";

/**
 * The server's own address (SERVER_IP:SERVER_PORT): free, or taken by an autoscan already running (doctor is often
 * run beside the server: that is fine), or taken by something else (the server could not start: an error).
 */
export interface PortCheckOptions {
  readonly ip: string;
  readonly port: number;
  /** How long a connect and the /health answer may take (default 3 s). */
  readonly timeoutMs?: number;
}

export function portFamily(options: PortCheckOptions): CheckFamily {
  return { name: "port", run: async () => [await portCheck(options)] };
}

export async function portCheck(options: PortCheckOptions): Promise<CheckResult> {
  const host = connectHost(options.ip);
  const where = `${options.ip}:${options.port}`;
  const timeoutMs = options.timeoutMs ?? 3000;
  const id = "server.port";
  const title = "Server port";
  const state = await probeTcp(host, options.port, timeoutMs);
  if (state === "free") return ok(id, title, `Nothing listens on ${where} yet: the server can take it.`);
  if (state !== "open") {
    return warn(id, title, `Could not tell whether ${where} is free (${state}).`, "Check SERVER_IP: it must be an address of this machine, or 0.0.0.0.");
  }
  const url = `http://${host.includes(":") ? `[${host}]` : host}:${options.port}/health`;
  const answer = await httpCall({ method: "GET", url, timeoutMs, maxBytes: 64 * 1024 }).catch((error: unknown) => ({
    status: 0,
    body: httpReason(error),
  }));
  const health = parseHealth(answer.body);
  if (health !== undefined) {
    return ok(id, title, `An autoscan is already running on ${where} (/health: ${health}).`);
  }
  const said = answer.status === 0 ? `no HTTP answer (${answer.body})` : `/health answered ${answer.status}`;
  return fail(
    id,
    title,
    `Something else listens on ${where} (${said}): the server cannot start there.`,
    `Stop that service, or set SERVER_PORT to a free port (and the port in your webhook URLs).`,
  );
}

/** autoscan's /health: `{"status":"ok"|"starting"|"error", …}`. */
function parseHealth(body: string): string | undefined {
  try {
    const json = JSON.parse(body) as { status?: unknown };
    return typeof json.status === "string" && ["ok", "starting", "error"].includes(json.status) ? json.status : undefined;
  } catch {
    return undefined;
  }
}

/** Where to look for a server bound to `ip`: a wildcard address is reached on loopback. */
export function connectHost(ip: string): string {
  if (ip === "" || ip === "0.0.0.0") return "127.0.0.1";
  if (ip === "::" || ip === "[::]") return "::1";
  return ip.replace(/^\[|\]$/g, "");
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
