import { ignoredKeyNotes, unbuiltFeatureWarnings } from "../../config/features.ts";
import type { Logger } from "../../core/logger.ts";
import { BUILT_FEATURES } from "../built-features.ts";
import type { Command } from "../command.ts";
import { loadRuntime } from "../runtime.ts";
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
    log.info({ configPath: runtime.settings.configPath }, `Starting autoscan ${readVersion()}`);
    for (const note of ignoredKeyNotes(config, runtime.loaded.explicitKeys)) log.info(note);
    for (const warning of unbuiltFeatureWarnings(config, BUILT_FEATURES)) log.warn(warning);
    const service = await startService(runtime, { env: input.io.env });
    log.info(`Started server: http://${config.SERVER_IP}:${config.SERVER_PORT}/<SERVER_PASS>`);
    await waitForAbort(input.io.shutdownSignal);
    log.info({ signal: String(input.io.shutdownSignal.reason) }, "Shutting down");
    await withBudget(service.stop(SHUTDOWN_BUDGET_MS - 500), SHUTDOWN_BUDGET_MS, log);
    log.info("Server stopped");
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
