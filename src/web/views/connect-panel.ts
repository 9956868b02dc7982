import { appConnections } from "../../arr/app-connections.ts";
import type { ArrType } from "../../arr/arr-type.ts";
import { escapeHtml } from "../../core/escape-html.ts";

/**
 * "Connect your apps" on the Scan page (and the page shown while it is off): the URL to paste into each *arr app and
 * the events to tick, as `autoscan webhook-url` prints them. Two addresses when autoscan runs in a container: the
 * compose service name (apps on the same Docker network) and the address this page was opened at (apps elsewhere).
 */
export interface ConnectAppsOptions {
  /** `ARR` (names and types); empty → one line per kind of app. */
  readonly apps: Readonly<Record<string, { readonly TYPE: ArrType }>>;
  readonly port: number;
  /** `SERVER_URL_BASE` ("" for none): part of every URL, the direct one too. */
  readonly urlBase?: string;
  readonly inContainer: boolean;
}

export interface ConnectPanelInput extends ConnectAppsOptions {
  readonly pass: string;
  /** The `Host` this page was asked for (`192.168.1.10:3467`), when the request named one. */
  readonly pageHost: string | undefined;
  readonly https: boolean;
}

export function renderConnectPanel(input: ConnectPanelInput): string {
  const origins = [
    ...(input.inContainer ? [{ label: "Same Docker network", origin: `http://autoscan:${String(input.port)}` }] : []),
    ...(input.pageHost ? [{ label: input.inContainer ? "Elsewhere (this page's address)" : "This page's address", origin: `${input.https ? "https" : "http"}://${input.pageHost}` }] : []),
  ];
  if (origins.length === 0) origins.push({ label: "Address", origin: `http://<this machine>:${String(input.port)}` });
  // Behind a proxy the page's own address already went through it: the prefix is part of every URL either way.
  for (const entry of origins) entry.origin += input.urlBase ?? "";
  const rows = appConnections("", input.pass, input.apps).map((app) => {
    const urls = origins
      .map(({ label, origin }) => `<div><span class="muted">${escapeHtml(label)}:</span> <code class="url">${escapeHtml(appConnections(origin, input.pass, input.apps, app.name)[0]?.url ?? "")}</code></div>`)
      .join("");
    return `<tr><th scope="row">${escapeHtml(app.name)}</th><td data-label="Webhook URL">${urls}</td><td data-label="Events to tick">${escapeHtml(app.events.join(", ") || "import, upgrade, rename and delete events")}</td></tr>`;
  });
  return `<section class="panel connect" aria-labelledby="connect-title">
<h2 id="connect-title">Connect your apps</h2>
<p>In each app: <b>Settings → Connect → + → Webhook</b>, paste its URL, method <b>POST</b>, tick the events below,
then <b>Test</b> (autoscan answers 200 and scans nothing). <code>autoscan webhook-url</code> prints the same URLs.</p>
<table class="stack connect-apps">
<thead><tr><th scope="col">App</th><th scope="col">Webhook URL</th><th scope="col">Events to tick</th></tr></thead>
<tbody>
${rows.join("\n")}
</tbody>
</table>
</section>`;
}
