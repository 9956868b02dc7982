import type { Context } from "hono";

/**
 * The peer's address as plex_autoscan logged it (`Client '192.168.1.5' …`). Forwarding headers are not trusted: they
 * are the sender's to forge. Under `app.request()` (tests) there is no socket: `unknown`.
 */
export function clientAddress(c: Context): string {
  const env = c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined;
  const address = env?.incoming?.socket?.remoteAddress;
  if (!address) return "unknown";
  return address.startsWith("::ffff:") ? address.slice("::ffff:".length) : address;
}
