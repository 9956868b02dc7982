import { ignoredKeyNotes, unbuiltFeatureWarnings } from "../../config/features.ts";
import type { Logger } from "../../core/logger.ts";
import { BUILT_FEATURES } from "../built-features.ts";
import type { Command } from "../command.ts";
import { loadRuntime } from "../runtime.ts";
import { createConfigReloader, type ConfigReloader } from "../reload.ts";
import { startService } from "../service.ts";
import { readVersion } from "../version.ts";

/** How long a graceful shutdown may take before the process exits anyway (SIGTERM → exit within 5 s). */
const SHUTDOWN_BUDGET_MS = 4_500;

export const serverCommand: Command = {
  name: "server",
  summary: "Run the scan relay: webhooks, manual scans, queue, Plex (the container's default command)",
  usage: "autoscan server [--config PATH] [--loglevel LEVEL] [--log-format classic|json]",
  description: "Stops cleanly on SIGTERM or SIGINT: stops taking requests, finishes or saves work, exits 0.",
  async run(input) {
    const runtime = await loadRuntime(input, { server: true });
    if ("exitCode" in runtime) return runtime.exitCode;
    const { log, config } = runtime;
    // The server's own lines; `log` (the root) goes to the modules, which name their component.
    const own = log.child({ component: "AUTOSCAN" });
    // SIGHUP reloads the config. Taken from the start: Node's default for SIGHUP would end the process.
    const reloading: { reloader?: ConfigReloader } = {};
    const onHangup = (): void => {
      if (reloading.reloader) void reloading.reloader.reload();
      else own.warn("Config reload asked for while autoscan is still starting; send SIGHUP again once it has started.");
    };
    process.on("SIGHUP", onHangup);
    own.info({ configPath: runtime.settings.configPath }, `Starting autoscan ${readVersion()}`);
    // The doctor's checks, in the background: each problem logged once as a warning; the start never waits for them.
    void import("../wiring/doctor.ts").then(({ runStartupChecks }) => runStartupChecks(runtime, log), () => undefined);
    for (const note of ignoredKeyNotes(config, runtime.loaded.explicitKeys)) own.info(note);
    for (const warning of unbuiltFeatureWarnings(config, BUILT_FEATURES)) own.warn(warning);
    const service = await startService(runtime, { env: input.io.env }).catch((error: unknown) => {
      process.off("SIGHUP", onHangup);
      throw error;
    });
    reloading.reloader = createConfigReloader({
      settings: runtime.settings,
      env: input.io.env,
      initial: config,
      apply: (next) => service.reload(next),
      log: own,
    });
    own.info(`Started server: http://${config.SERVER_IP}:${config.SERVER_PORT}/<SERVER_PASS>`);
    await waitForAbort(input.io.shutdownSignal);
    own.info({ signal: String(input.io.shutdownSignal.reason) }, "Shutting down");
    process.off("SIGHUP", onHangup);
    await withBudget(service.stop(SHUTDOWN_BUDGET_MS - 500), SHUTDOWN_BUDGET_MS, own);
    own.info("Server stopped");
    await runtime.logs.settle();
    runtime.logs.close();
    return 0;
  },
};

function waitForAbort(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener("abort", () => resolve(), { once: true });
  });
}

async function withBudget(work: Promise<unknown>, ms: number, log: Logger): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<"late">((resolve) => (timer = setTimeout(() => resolve("late"), ms)));
  const result = await Promise.race([work.then(() => "done" as const), late]);
  clearTimeout(timer);
  if (result === "late") log.warn({ budgetMs: ms }, "Shutdown took too long; stopping anyway");
}
