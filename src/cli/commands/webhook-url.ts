import { loadConfig, requireServerPass } from "../../config/load.ts";
import { resolveSettings } from "../../config/settings.ts";
import { UsageError } from "../../core/errors.ts";
import { appConnections, type AppConnection } from "../../arr/app-connections.ts";
import { serviceNameAdvice } from "../../arr/reach-advice.ts";
import { stringFlag, type CommandSpec } from "../command.ts";
import { autoscanOrigin } from "../autoscan-address.ts";
import { isInContainer } from "../../core/in-container.ts";

/**
 * `autoscan webhook-url [--host HOST] [--app NAME]`: the URL to paste into each *arr app, so nobody assembles it from
 * a secret in a 0600 file. The URLs go to stdout (one per line: what a script reads); where to paste them and which
 * events to tick go to stderr.
 */
export const webhookUrlCommand: CommandSpec = {
  usage: "autoscan webhook-url [--host HOST] [--app NAME] [--config PATH]",
  description:
    "HOST defaults to 'autoscan' inside a container (the compose file's service name: what an app on the same Docker " +
    "network uses) and to this machine's LAN address outside one. HOST may carry a port or be a whole address " +
    "(https://autoscan.example.org behind a reverse proxy). Without --app, one URL per app under ARR in config.json, " +
    "or one per kind of app when ARR is empty.",
  options: { host: { type: "string" }, app: { type: "string" } },
  optionHelp: {
    host: "the address the apps reach autoscan at: a name, name:port, or http(s)://address",
    app: "just this app's URL (an ARR name, or any name: it labels the app in logs and History)",
  },
  async run({ values, io }) {
    const settings = resolveSettings(values, io.env, io.installDir);
    const loaded = await loadConfig(settings.configPath, io.env, false);
    if (loaded.kind !== "loaded") return 2;
    requireServerPass(loaded);
    const { config } = loaded;
    const inContainer = isInContainer();
    const host = stringFlag(values, "host");
    // A whole address given (a proxy's) carries its own path; otherwise SERVER_URL_BASE is part of the URL.
    const origin = autoscanOrigin(host, config, inContainer, "host");
    const app = stringFlag(values, "app");
    if (app !== undefined && !/^[\p{L}\p{N}][\p{L}\p{N} ._-]{0,39}$/u.test(app)) {
      throw new UsageError(`--app "${app}" is not a usable name: use up to 40 letters, digits, spaces, ".", "_" or "-".`);
    }
    const connections = appConnections(origin, config.SERVER_PASS, config.ARR, app);
    io.stdout.write(connections.map((connection) => `${connection.url}\n`).join(""));
    io.stderr.write(guidance(connections, inContainer, host !== undefined, config.SERVER_PORT));
    return 0;
  },
};

function guidance(connections: readonly AppConnection[], inContainer: boolean, hostGiven: boolean, port: number): string {
  const lines = ["", "In each app: Settings → Connect → + → Webhook; URL as above, Method POST; then Test (it answers 200).", ""];
  for (const connection of connections) {
    lines.push(`  ${connection.name}: ${connection.events.length ? `tick ${connection.events.join(", ")}` : "tick the import, upgrade, rename and delete events"}`);
  }
  if (!hostGiven) {
    lines.push(
      "",
      inContainer
        ? serviceNameAdvice("autoscan webhook-url --host", port)
        : "The address is this machine's; apps in containers on it may need the host's LAN address as here, not localhost.",
    );
  }
  return `${lines.join("\n")}\n`;
}
