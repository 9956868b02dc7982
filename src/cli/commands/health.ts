import { loadConfig } from "../../config/load.ts";
import { resolveSettings } from "../../config/settings.ts";
import { describeError } from "../../core/errors.ts";
import type { CommandSpec } from "../command.ts";

/** Asks the running server's /health (the Docker HEALTHCHECK uses this, so it follows SERVER_IP and SERVER_PORT). */
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
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(Math.max(1, seconds) * 1000) });
      io.stdout.write(`${(await response.text()).trim()}\n`);
      if (!response.ok) io.stderr.write(`${url} answered ${response.status}.\n`);
      return response.ok ? 0 : 1;
    } catch (error) {
      io.stderr.write(`No answer from ${url}: ${describeError(error)}. Is 'autoscan server' running?\n`);
      return 1;
    }
  },
};
