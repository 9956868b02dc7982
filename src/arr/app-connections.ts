import { ARR_TYPES, type ArrType } from "./arr-type.ts";
import { EVENT_FLAGS } from "./connection-facts.ts";

/**
 * What a user pastes into each *arr app to connect it (Settings → Connect → + → Webhook): the URL, and the events to
 * tick. One URL per app, `/<SERVER_PASS>/<name>`, so logs and History name the instance (`Sonarr (sonarr4k)`). The
 * event names are the check boxes as the apps label them; autoscan scans on each of them and ignores the rest (a Grab
 * is answered 200 and not scanned, so ticking it does no harm, it only adds a log line). They are the events
 * `autoscan arr connect` ticks (EVENT_FLAGS, connection-facts.ts).
 */
export interface AppConnection {
  /** The name in the URL and the logs (an `ARR` entry's name, or the app's type). */
  readonly name: string;
  readonly type: ArrType | undefined;
  readonly url: string;
  readonly events: readonly string[];
}

/** `http://host:port` + `/<pass>` + `/<name>`; the name percent-encoded (a space is allowed in names). */
export function webhookUrl(origin: string, pass: string, name?: string): string {
  return `${origin.replace(/\/+$/, "")}/${encodeURIComponent(pass)}${name ? `/${encodeURIComponent(name)}` : ""}`;
}

/**
 * One connection per app: the `ARR` entries when there are any (their names and types), else one per kind of app
 * (`sonarr`, `radarr`, `lidarr`, `readarr`). `only`: just that name (an `ARR` entry, or any name of one's own).
 */
export function appConnections(
  origin: string,
  pass: string,
  apps: Readonly<Record<string, { readonly TYPE: ArrType }>>,
  only?: string,
): AppConnection[] {
  const named = Object.entries(apps).map(([name, app]) => ({ name, type: app.TYPE }));
  const all = named.length ? named : ARR_TYPES.map((type) => ({ name: type, type }));
  const chosen = only === undefined ? all : [all.find((app) => app.name === only) ?? { name: only, type: typeFromName(only) }];
  return chosen.map(({ name, type }) => ({ name, type, url: webhookUrl(origin, pass, name), events: type ? EVENT_FLAGS[type].map((event) => event.label) : [] }));
}

/** `sonarr4k` → sonarr: a name that starts with an app's name. */
function typeFromName(name: string): ArrType | undefined {
  return ARR_TYPES.find((type) => name.toLowerCase().startsWith(type));
}
