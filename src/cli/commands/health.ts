import { loadConfig } from "../../config/load.ts";
import { resolveSettings } from "../../config/settings.ts";
import { describeError } from "../../core/errors.ts";
import type { ConfigSource } from "../../config/provenance.ts";
import { jsonBody } from "../../http/json-body.ts";
import type { CommandSpec } from "../command.ts";

/**
 * Asks the running server's /health at SERVER_IP:SERVER_PORT as the server itself resolves them (the environment wins
 * over config.json). The Docker HEALTHCHECK runs this, in the image whose environment sets SERVER_PORT to the port
 * docker-compose.yml publishes: so "healthy" means that port answers. Anything but autoscan's /health there fails,
 * naming the port and where it comes from.
 */
export const healthCommand: CommandSpec = {
  usage: "autoscan health [--config PATH] [--timeout SECONDS]",
  options: { timeout: { type: "string" } },
  optionHelp: { timeout: "SECONDS  how long to wait for the answer (default 5)" },
  async run({ values, io }) {
    const settings = resolveSettings(values, io.env, io.installDir);
    const loaded = await loadConfig(settings.configPath, io.env, false);
    if (loaded.kind !== "loaded") return 1;
    const { SERVER_IP, SERVER_PORT } = loaded.config;
    const host = SERVER_IP === "0.0.0.0" || SERVER_IP === "" ? "127.0.0.1" : SERVER_IP === "::" ? "[::1]" : SERVER_IP;
    const seconds = Number(typeof values.timeout === "string" ? values.timeout : 5);
    const url = `http://${host.includes(":") && !host.startsWith("[") ? `[${host}]` : host}:${SERVER_PORT}/health`;
    const port = `SERVER_PORT ${String(SERVER_PORT)} ${portOrigin(loaded.sources.get("SERVER_PORT"))}`;
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(Math.max(1, seconds) * 1000) });
      const text = (await response.text()).trim();
      if (!isAutoscanHealth(text)) {
        io.stderr.write(`${url} (${port}) answered ${response.status}, but not as autoscan does: another service has the port. Stop it, or move one of the two.\n`);
        return 1;
      }
      io.stdout.write(`${text}\n`);
      if (!response.ok) io.stderr.write(`${url} answered ${response.status}.\n`);
      return response.ok ? 0 : 1;
    } catch (error) {
      io.stderr.write(`No answer from ${url} (${port}): ${describeError(error)}. Is 'autoscan server' running, and on that port?\n`);
      return 1;
    }
  },
};

/** Where the port comes from, for the message: `(from the environment variable SERVER_PORT)` … */
function portOrigin(source: ConfigSource | undefined): string {
  switch (source?.kind) {
    case "environment":
      return "from the environment variable SERVER_PORT, which wins over config.json";
    case "file-variable":
      return `from the file named by ${source.variable}`;
    case "config.json":
      return `from ${source.path}`;
    default:
      return "by default";
  }
}

/** autoscan's /health body: JSON with a `status` text (a 503 "error" is still autoscan answering). */
function isAutoscanHealth(text: string): boolean {
  return typeof (jsonBody(text) as { status?: unknown } | null | undefined)?.status === "string";
}
