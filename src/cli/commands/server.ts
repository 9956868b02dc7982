import { ignoredKeyNotes, unbuiltFeatureWarnings } from "../../config/features.ts";
import type { Logger } from "../../core/logger.ts";
import { BUILT_FEATURES } from "../../config/built-features.ts";
import type { CommandSpec, CommandInput } from "../command.ts";
import { loadRuntime } from "../runtime.ts";
import { createConfigReloader, type ConfigReloader } from "../reload.ts";
import { startService } from "../service.ts";
import { readVersion } from "../version.ts";

/** How long a graceful shutdown may take before the process exits anyway (SIGTERM → exit within 5 s). */
const SHUTDOWN_BUDGET_MS = 4_500;

export const serverCommand: CommandSpec = {
  usage: "autoscan server [--config PATH] [--loglevel LEVEL] [--log-format classic|json]",
  description: "Stops cleanly on SIGTERM or SIGINT: stops taking requests, finishes or saves work, exits 0.",
  async run(input) {
    // SIGHUP reloads the config. Taken for the whole run, from before the config is read to the exit: Node's default
    // for SIGHUP ends the process, which would skip the start or the graceful stop.
    const reloading: { reloader?: ConfigReloader; log?: Logger; stopping?: boolean } = {};
    const onHangup = (): void => {
      if (reloading.reloader && !reloading.stopping) return void reloading.reloader.reload();
      const when = reloading.stopping ? "while autoscan is stopping" : "while autoscan is still starting";
      reloading.log?.warn(`Config reload asked for ${when}; ignored.`);
    };
    process.on("SIGHUP", onHangup);
    try {
      return await serve(input, reloading);
    } finally {
      process.off("SIGHUP", onHangup);
    }
  },
};

async function serve(input: CommandInput, reloading: { reloader?: ConfigReloader; log?: Logger; stopping?: boolean }): Promise<number> {
  const runtime = await loadRuntime(input, { server: true });
  if ("exitCode" in runtime) return runtime.exitCode;
  const { log, config } = runtime;
  // The server's own lines; `log` (the root) goes to the modules, which name their component.
  const own = log.child({ component: "AUTOSCAN" });
  reloading.log = own;
  own.info({ configPath: runtime.settings.configPath }, `Starting autoscan ${readVersion()}`);
  // The doctor's checks, in the background: each problem logged once as a warning; the start never waits for them.
  void import("../../ops/doctor/doctor.ts").then(({ runStartupChecks }) => runStartupChecks(runtime, log), () => undefined);
  for (const note of ignoredKeyNotes(config, runtime.loaded.explicitKeys)) own.info(note);
  for (const warning of unbuiltFeatureWarnings(config, BUILT_FEATURES)) own.warn(warning);
  const service = await startService(runtime, { env: input.io.env });
  reloading.reloader = createConfigReloader({
    settings: runtime.settings,
    env: input.io.env,
    initial: config,
    apply: (next) => service.reload(next),
    log: own,
  });
  // SERVER_URL_BASE included: the URL the routes answer at (the old, unprefixed one is answered 404).
  own.info(`Started server: http://${config.SERVER_IP}:${config.SERVER_PORT}${config.SERVER_URL_BASE}/<SERVER_PASS>`);
  await waitForAbort(input.io.shutdownSignal);
  own.info({ signal: String(input.io.shutdownSignal.reason) }, "Shutting down");
  reloading.stopping = true;
  await withBudget(service.stop(SHUTDOWN_BUDGET_MS - 500), SHUTDOWN_BUDGET_MS, own);
  own.info("Server stopped");
  await runtime.logs.settle();
  runtime.logs.close();
  return 0;
}

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
