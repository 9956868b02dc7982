import { fstatSync } from "node:fs";
import { isInContainer } from "../../core/in-container.ts";
import { ConfigError } from "../../core/errors.ts";
import { DEFAULT_LOOPBACK_PORT, runAuthorize } from "../../drive/authorize.ts";
import { stringFlag, type CommandSpec, type CommandIO } from "../command.ts";
import { loadRuntime } from "../runtime.ts";
import { googleEndpointsFromEnv, tokenStoreFor } from "../../drive/from-config.ts";

/**
 * `autoscan authorize` (in Docker: `docker exec -it autoscan autoscan authorize`): obtains the Google tokens for the
 * Drive monitor with the loopback flow and stores them in the data dir. Exit 0 on success, 1 when it failed, 2 when
 * there is no input to paste into (no `-i`), 130 on Ctrl-C. It talks to a person: plain text on stderr, no log lines.
 */
export const authorizeCommand: CommandSpec = {
  usage: "autoscan authorize [--port N] [--config PATH]",
  description:
    "Needs CLOUD.ENABLED and a \"Desktop app\" OAuth client in CLOUD.CLIENT_ID / CLOUD.CLIENT_SECRET. Open the link, " +
    "allow access, then paste the address your browser ends on (the page may fail to load on a headless server; " +
    "the address bar still holds the code). Outside a container, when the browser can reach the port (same machine, " +
    `or ssh -L ${DEFAULT_LOOPBACK_PORT}:127.0.0.1:${DEFAULT_LOOPBACK_PORT}), autoscan catches the answer by itself; in ` +
    "Docker, paste the address. It needs a terminal: docker exec -it autoscan autoscan authorize. " +
    "The tokens go to google-token.json in the data dir (mode 0600); restart autoscan afterwards.",
  options: { port: { type: "string" } },
  optionHelp: { port: `N  loopback port for Google's redirect (default ${DEFAULT_LOOPBACK_PORT}; 0 = any free port)` },
  async run(input) {
    const runtime = await loadRuntime(input);
    if ("exitCode" in runtime) return runtime.exitCode;
    const { config, settings, logs } = runtime;
    const { stderr } = input.io;
    const cloud = config.CLOUD;
    try {
      if (!cloud.ENABLED) {
        stderr.write(`You must enable the CLOUD section in config: set CLOUD.ENABLED to true in ${settings.configPath}.\n`);
        return 1;
      }
      const other = cloud.SERVICE_ACCOUNT_FILE ? "CLOUD.SERVICE_ACCOUNT_FILE" : cloud.RCLONE_REMOTE ? "CLOUD.RCLONE_REMOTE" : undefined;
      if (other) {
        stderr.write(`${other} is set, so the monitor uses those credentials and needs no authorization. Clear it to use CLOUD.CLIENT_ID instead.\n`);
        return 1;
      }
      if (!cloud.CLIENT_ID || !cloud.CLIENT_SECRET) {
        throw new ConfigError("CLOUD.CLIENT_ID and CLOUD.CLIENT_SECRET are empty", [
          `create an OAuth client of type "Desktop app" in Google Cloud Console (APIs & Services → Credentials) and copy its id and secret into ${settings.configPath}`,
        ]);
      }
      const port = parsePort(stringFlag(input.values, "port"));
      if (!canAnswer(input.io.stdin)) {
        stderr.write(
          "autoscan authorize needs a terminal to paste Google's answer into, and its input is closed.\n" +
            "In Docker, add -it: docker exec -it autoscan autoscan authorize\n",
        );
        return 2;
      }
      const result = await runAuthorize({
        clientId: cloud.CLIENT_ID,
        clientSecret: cloud.CLIENT_SECRET,
        scopeNeeds: { sharedDrives: cloud.TEAMDRIVE && cloud.TEAMDRIVES.length > 0 },
        tokenStore: tokenStoreFor(settings),
        output: stderr,
        input: input.io.stdin,
        port,
        loopbackHint: !isInContainer(),
        endpoints: googleEndpointsFromEnv(input.io.env, runtime.log),
        onSecret: (value) => logs.scrubber.add(value),
        signal: input.io.shutdownSignal,
      });
      if (result.ok) return 0;
      if ("interrupted" in result) {
        // Ctrl-C while waiting for the person or for Google: one line, no stack (runAuthorize ended the prompt's line).
        stderr.write("autoscan authorize: interrupted, nothing was saved.\n");
        return input.io.shutdownSignal.reason === "SIGTERM" ? 143 : 130;
      }
      stderr.write(`autoscan authorize: ${result.message}\n`);
      return 1;
    } finally {
      logs.close();
    }
  },
};

/**
 * False when nothing can ever be read: stdin is /dev/null, as with `docker exec` without `-i` (or `< /dev/null`).
 * A terminal, a pipe and a file all can answer (scripts and tests pipe the answer in).
 */
function canAnswer(stdin: CommandIO["stdin"]): boolean {
  if (stdin.isTTY) return true;
  const fd = (stdin as { fd?: unknown }).fd;
  if (typeof fd !== "number") return true;
  try {
    return !fstatSync(fd).isCharacterDevice();
  } catch {
    return false;
  }
}


function parsePort(raw: string | undefined): number {
  if (raw === undefined) return DEFAULT_LOOPBACK_PORT;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new ConfigError(`--port ${raw} is not a port number`, ["use a number from 0 to 65535 (0 = any free port)"]);
  }
  return port;
}
