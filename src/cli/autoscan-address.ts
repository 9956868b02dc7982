import { networkInterfaces } from "node:os";
import { UsageError } from "../core/errors.ts";

/**
 * Where the *arr apps reach autoscan, for the URLs `webhook-url` prints and `arr connect` sets: the address given
 * (`--host`/`--url`: a name, name:port, or a whole http(s):// address, a proxy's path kept), else 'autoscan' inside
 * a container (the compose file's service name: what an app on the same Docker network uses) and this machine's LAN
 * address outside one; SERVER_PORT when no port is given, and SERVER_URL_BASE unless a whole address was given.
 */
export function autoscanOrigin(
  given: string | undefined,
  config: { readonly SERVER_PORT: number; readonly SERVER_URL_BASE: string },
  inContainer: boolean,
  flag: string,
): string {
  const host = given ?? (inContainer ? "autoscan" : (lanAddress() ?? "localhost"));
  return originOf(host, config.SERVER_PORT, flag) + (given && /:\/\//.test(given) ? "" : config.SERVER_URL_BASE);
}

/** `autoscan` → http://autoscan:3467; `nas:8080` → http://nas:8080; `https://x.example/autoscan` as it is. */
function originOf(host: string, port: number, flag: string): string {
  const text = host.trim();
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `http://${text}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw new UsageError(`--${flag} "${host}" is not an address: give a name (autoscan), name:port (nas:3467) or http(s)://address.`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new UsageError(`--${flag} "${host}": only http:// and https:// addresses work.`);
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(text) && url.port === "") url.port = String(port);
  return `${url.origin}${url.pathname.replace(/\/+$/, "")}`;
}

/** The first IPv4 address of this machine that is not loopback (what an app on the LAN reaches). */
function lanAddress(): string | undefined {
  for (const entries of Object.values(networkInterfaces())) {
    const found = entries?.find((entry) => entry.family === "IPv4" && !entry.internal);
    if (found) return found.address;
  }
  return undefined;
}
