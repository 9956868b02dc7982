import { createArrClient } from "../../arr/arr-client.ts";
import { connectApp, type ConnectOutcome } from "../../arr/connect-app.ts";
import { loadConfig, requireServerPass } from "../../config/load.ts";
import { resolveSettings } from "../../config/settings.ts";
import { UsageError } from "../../core/errors.ts";
import { webhookUrl } from "../../arr/app-connections.ts";
import { createLogger } from "../../logging/create-logger.ts";
import { autoscanOrigin } from "../autoscan-address.ts";
import { recheckArrConnections } from "../recheck-arr-connections.ts";
import { booleanFlag, stringFlag, type CommandSpec } from "../command.ts";
import { isInContainer } from "../../core/in-container.ts";

/**
 * `autoscan arr connect [--app NAME] [--url URL] [--dry-run]`: for each app under `ARR`, through its API and key, one
 * Webhook connection to this autoscan (`<url>/<SERVER_PASS>/<name>`, POST, the events autoscan scans on, not Grab):
 * created, or the one there fixed, never a second; then the app tests it (src/arr/connect-app.ts). One line per app
 * on stdout (the result); notes on stderr. SERVER_PASS shows as `<SERVER_PASS>`; no key is ever printed.
 */
export const arrConnectCommand: CommandSpec = {
  usage: "autoscan arr connect [--app NAME] [--url URL] [--dry-run] [--config PATH]",
  description:
    "Uses each app's URL and API_KEY under ARR in config.json. URL is the address the apps reach autoscan at, as for " +
    "'autoscan webhook-url --host': by default 'autoscan' inside a container and this machine's LAN address outside " +
    "one. Without --url a connection that already carries SERVER_PASS keeps its address; with it, the address is set. " +
    "The apps test a connection before saving it, so autoscan must be running and reachable from them. Nothing of " +
    "yours is deleted: other connections that also send to autoscan are named, not removed. Exit codes: 0 every app " +
    "is connected (or, with --dry-run, could be looked at); 1 an app failed; 2 bad usage or config.",
  options: { app: { type: "string" }, url: { type: "string" }, "dry-run": { type: "boolean" } },
  optionHelp: {
    app: "NAME  only this app of ARR",
    url: "URL  the address the apps reach autoscan at: a name, name:port, or http(s)://address",
    "dry-run": "say what would change; change nothing, test nothing",
  },
  async run({ values, io }) {
    const settings = resolveSettings(values, io.env, io.installDir);
    const loaded = await loadConfig(settings.configPath, io.env, false);
    if (loaded.kind !== "loaded") return 2;
    requireServerPass(loaded);
    const { config } = loaded;
    const names = Object.keys(config.ARR);
    const only = stringFlag(values, "app");
    if (only !== undefined && names.length > 0 && !names.includes(only)) throw new UsageError(`--app: no app '${only}' under ARR (known: ${names.join(", ")})`);
    if (names.length === 0) {
      io.stderr.write(
        `No *arr app is configured: add each under ARR in ${settings.configPath} with its TYPE, URL and API_KEY (see the README, ` +
          `"Catching up"), or connect them by hand with the URLs 'autoscan webhook-url' prints.\n`,
      );
      return 1;
    }
    const given = stringFlag(values, "url");
    const origin = autoscanOrigin(given, config, isInContainer(), "url");
    const dryRun = booleanFlag(values, "dry-run");
    const logs = createLogger({
      level: settings.origin.logLevel === "default" ? "silent" : settings.logLevel,
      format: settings.logFormat,
      stream: "stderr",
      secrets: [config.SERVER_PASS, ...Object.values(config.ARR).map((app) => app.API_KEY)],
    });
    try {
      const chosen = only === undefined ? names : [only];
      // Each app at once: one that hangs costs its TIMEOUT, not the sum of them; the lines come in ARR's order.
      const outcomes = await Promise.all(
        chosen.map(async (name): Promise<ConnectOutcome> => {
          const app = config.ARR[name];
          if (!app) throw new UsageError(`--app: no app '${name}' under ARR`);
          const client = createArrClient({ name, type: app.TYPE, url: app.URL, apiKey: app.API_KEY, timeoutMs: app.TIMEOUT * 1000, log: logs.log });
          const expected = { type: app.TYPE, name, pass: config.SERVER_PASS, url: webhookUrl(origin, config.SERVER_PASS, name), strictHost: given !== undefined };
          return connectApp(client, expected, dryRun, io.shutdownSignal);
        }),
      );
      chosen.forEach((name, index) => {
        const outcome = outcomes[index];
        if (!outcome) return;
        io.stdout.write(`${name}: ${outcome.line}\n`);
        for (const note of outcome.notes) io.stderr.write(`${name}: ${note}\n`);
      });
      // The running server looks at the apps made right now: its warning about them ends at once.
      if (!dryRun) await recheckArrConnections(config, chosen.filter((_name, index) => outcomes[index]?.result !== "failed"), io);
      return outcomes.some((outcome) => outcome.result === "failed") ? 1 : 0;
    } finally {
      logs.close();
    }
  },
};
