import type { Config } from "../../config/schema.ts";
import { httpCall } from "../../http/http-call.ts";
import { connectHost } from "../../ops/doctor/port.ts";

/**
 * The running server's `/health` body, as doctor reads it from its own process (a 503 is an answer too: the queue
 * cannot write, and the rest of the detail still holds); `undefined` when no autoscan answers at the configured port.
 */
export async function readServerHealth(config: Pick<Config, "SERVER_IP" | "SERVER_PORT">): Promise<Record<string, unknown> | undefined> {
  const host = connectHost(config.SERVER_IP);
  const url = `http://${host.includes(":") ? `[${host}]` : host}:${String(config.SERVER_PORT)}/health`;
  const answer = await httpCall({ method: "GET", url, timeoutMs: 3000, maxBytes: 1024 * 1024 }).catch(() => undefined);
  if (answer === undefined || (answer.status !== 200 && answer.status !== 503)) return undefined;
  try {
    const body = JSON.parse(answer.body) as Record<string, unknown>;
    return typeof body.status === "string" ? body : undefined;
  } catch {
    return undefined;
  }
}
