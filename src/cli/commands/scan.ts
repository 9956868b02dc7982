import { UsageError, describeError } from "../../core/errors.ts";
import { systemClock } from "../../core/clock.ts";
import type { Logger } from "../../core/logger.ts";
import type { RunPlan } from "../../docker/command-runner.ts";
import { ExecAbandonedError, ExecTimeoutError, ScannerNotFoundError } from "../../docker/errors.ts";
import { scanArgs, type PlexScanner } from "../../docker/plex-scanner.ts";
import { createPathMapper } from "../../paths/mapping.ts";
import { withoutTrailingSlash } from "../../paths/normalize.ts";
import { booleanFlag, stringFlag, type CommandSpec, type CommandIO } from "../command.ts";
import { loadRuntime, type Runtime } from "../runtime.ts";
import { createFolderSections, createScannerFromConfig } from "../../targets/plex/scanner-from-config.ts";

/**
 * `autoscan scan --directory <path>`: plex_autoscan's direct library scan, `Plex Media Scanner --scan --refresh
 * --section <id> --directory <folder>`, in the Plex container (USE_DOCKER) or on this host. The folder may be given in
 * any SERVER_PATH_MAPPINGS form; the section comes from the Plex API (PLEX_TOKEN) or from the scanner itself.
 * The scanner's output streams live (its stdout to stdout, its stderr to stderr); the exit code is the scanner's.
 */
export const scanCommand: CommandSpec = {
  usage: "autoscan scan [--directory] PATH [--section ID] [--dry-run] [--config PATH]",
  description:
    "PATH may be a movie, show or season folder, in the server's form or any form listed in SERVER_PATH_MAPPINGS. " +
    "Without --section the section is found from the path (Plex's API with PLEX_TOKEN; else the library database " +
    "through Plex SQLite, or `Plex Media Scanner --list`). Exit codes: the scanner's; 1 when nothing ran; " +
    "124 when PLEX_SCANNER_TIMEOUT passed; 127 when the scanner could not be started.",
  options: { directory: { type: "string", short: "d" }, section: { type: "string", short: "c" }, "dry-run": { type: "boolean" } },
  allowPositionals: true,
  optionHelp: {
    directory: "PATH  the folder to scan (required; may also be given without the flag)",
    section: "ID  the Plex library section (default: found from the path)",
    "dry-run": "print the container, user, environment and argv that would run, and stop",
  },
  async run(input) {
    const raw = folderArgument(stringFlag(input.values, "directory"), input.positionals);
    const section = stringFlag(input.values, "section");
    if (section !== undefined && !/^\d+$/.test(section)) {
      throw new UsageError(`--section expects a section number, as \`autoscan sections\` lists them (got "${section}")`);
    }
    const runtime = await loadRuntime(input);
    if ("exitCode" in runtime) return runtime.exitCode;
    try {
      return await scan(runtime, input.io, toServerForm(runtime, raw), section, booleanFlag(input.values, "dry-run"));
    } catch (error) {
      // Also when finding the section needed the scanner (`--list`, Plex SQLite): 127, as for the scan itself.
      if (error instanceof ScannerNotFoundError) return fail(input.io, error, 127);
      throw error;
    } finally {
      runtime.logs.close();
    }
  },
};

/** The folder: `--directory PATH` or the one positional `PATH` (what people type first), not both. */
function folderArgument(flag: string | undefined, positionals: readonly string[]): string {
  if (positionals.length > (flag === undefined ? 1 : 0)) {
    throw new UsageError(`expected one folder, got ${[...(flag === undefined ? [] : [flag]), ...positionals].map((p) => `"${p}"`).join(" and ")}`);
  }
  const raw = flag ?? positionals[0];
  if (raw === undefined || raw.trim() === "") throw new UsageError("the folder to scan is required (--directory PATH)");
  return raw;
}

async function scan(runtime: Runtime, io: CommandIO, folder: string, section: string | undefined, dryRun: boolean) {
  const { config } = runtime;
  const log = runtime.log.child({ component: "PLEX" });
  const wiring = { config, dockerHost: runtime.settings.dockerHost, clock: systemClock, log: runtime.log };
  const { scanner } = createScannerFromConfig(wiring);
  const sections = section !== undefined ? [section] : await findSections(wiring, scanner, folder, io);
  if (sections.length === 0) return 1;
  if (dryRun) {
    const resolved = await scanner.layout();
    for (const id of sections) io.stdout.write(renderPlan(await scanner.plan(scanArgs(id, folder)), resolved.reason));
    return 0;
  }
  for (const id of sections) {
    log.info({ section: id, path: folder }, `Running Plex Media Scanner for: ${folder}`);
    const code = await runScan(scanner, id, folder, io, config.PLEX_SCANNER_TIMEOUT * 1000, log);
    if (code !== 0) return code;
  }
  log.info({ path: folder }, "Finished scan!");
  return 0;
}

async function runScan(scanner: PlexScanner, id: string, folder: string, io: CommandIO, timeoutMs: number, log: Logger) {
  try {
    const result = await scanner.run(scanArgs(id, folder), {
      timeoutMs,
      signal: io.shutdownSignal,
      onLine: (line) => (line.stream === "stdout" ? io.stdout : io.stderr).write(`${line.text}\n`),
    });
    if (result.exitCode !== 0) log.error({ section: id, exitCode: result.exitCode }, `Plex Media Scanner exited with code ${result.exitCode}`);
    return result.exitCode;
  } catch (error) {
    if (error instanceof ScannerNotFoundError) return fail(io, error, 127);
    if (error instanceof ExecTimeoutError) return fail(io, error, 124);
    if (error instanceof ExecAbandonedError) return fail(io, error, 130);
    throw error;
  }
}

async function findSections(wiring: Parameters<typeof createFolderSections>[0], scanner: PlexScanner, folder: string, io: CommandIO) {
  const sections = createFolderSections(wiring, scanner);
  const found = await sections.resolve(folder, io.shutdownSignal);
  if (found.length > 0) {
    for (const entry of found) wiring.log.child({ component: "PLEX" }).info(`Using Section ID '${entry.id}' for '${folder}'`);
    return found.map((entry) => entry.id);
  }
  const known = await sections.list(io.shutdownSignal).catch(() => []);
  const listing = known.map((entry) => `  ${entry.id}: ${entry.title}${entry.locations.length ? ` (${entry.locations.join(", ")})` : ""}`);
  io.stderr.write(
    [`Unable to map '${folder}' to a Section ID.`, "Pass --section ID. Plex's sections:", ...listing, ""].join("\n"),
  );
  return [];
}

/** The folder in the server's form: the mapper swaps a mapped prefix and keeps the rest of the path's exact bytes. */
function toServerForm(runtime: Runtime, raw: string): string {
  return withoutTrailingSlash(createPathMapper({ mappings: runtime.config.SERVER_PATH_MAPPINGS }).toServer(raw).path);
}

function renderPlan(plan: RunPlan, reason: string): string {
  const env = Object.entries(plan.env).map(([name, value]) => `${name}=${JSON.stringify(value)}`);
  return [
    `Would run in ${plan.where}:`,
    `  layout: ${reason}`,
    `  user:   ${plan.user ?? "(the default user)"}`,
    `  env:    ${env.length ? env.join("\n          ") : "(nothing added)"}`,
    ...(plan.workdir ? [`  cwd:    ${plan.workdir}`] : []),
    `  argv:   ${JSON.stringify(plan.argv)}`,
    "",
  ].join("\n");
}

function fail(io: CommandIO, error: Error, code: number): number {
  io.stderr.write(`autoscan scan: ${describeError(error)}\n`);
  return code;
}
