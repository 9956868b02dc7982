import { access, constants, readFile, stat } from "node:fs/promises";
import { explicitLayout } from "../../targets/plex/scanner-from-config.ts";
import type { Config } from "../../config/schema.ts";
import { systemClock } from "../../core/clock.ts";
import { describeError } from "../../core/errors.ts";
import { ContainerNotFoundError } from "../../docker/errors.ts";
import { NATIVE_LAYOUT, resolveLayout, type ScannerLayout } from "../../docker/presets.ts";
import { fail, ok, skip, skipAfter, type CheckResult } from "./check.ts";

/**
 * The scanner method (PLEX_SCAN_METHOD "scanner", or USE_DOCKER), through the modules the scanner target itself uses:
 * the Docker engine answers, the Plex container exists and runs, `Plex Media Scanner` is where the preset or
 * PLEX_SCANNER says (the Docker executor and the preset detection; on this host when USE_DOCKER is false), and
 * PLEX_USER exists there.
 */
/** The checks in order: a failed one skips those after it. */
const STEPS = { "scanner.docker": "Docker", "scanner.container": "Plex container", "scanner.binary": "Plex scanner", "scanner.user": "Scanner user" };

export function scannerChecks(config: Config, dockerHost: string | undefined): Promise<CheckResult[]> {
  return config.USE_DOCKER ? dockerChecks(config, dockerHost) : hostChecks(config);
}

async function dockerChecks(config: Config, dockerHost: string | undefined): Promise<CheckResult[]> {
  const name = config.DOCKER_NAME;
  // The Docker client (dockerode) is loaded only for the scanner mode, as the service itself does.
  const { createDockerExecutor } = await import("../../docker/executor.ts");
  const executor = createDockerExecutor({ dockerHost, clock: systemClock });
  try {
    await executor.ping();
  } catch (error) {
    return [
      fail("scanner.docker", "Docker", describeError(error), "Give autoscan the Docker socket (docker-compose.scanner.yml, or a socket proxy that allows exec), or set DOCKER_HOST."),
      ...skipAfter(STEPS, "scanner.docker", "The Docker engine did not answer."),
    ];
  }
  const out: CheckResult[] = [ok("scanner.docker", "Docker", `The Docker engine answers at ${executor.endpoint}.`)];
  let state: string;
  try {
    const info = await executor.inspect(name);
    state = info.state;
    out.push(
      state === "running"
        ? ok("scanner.container", "Plex container", `Container '${name}' is running (${info.image}).`)
        : fail("scanner.container", "Plex container", `Container '${name}' is ${state}: scans wait until it runs.`, `Start it: docker start ${name}.`),
    );
  } catch (error) {
    if (!(error instanceof ContainerNotFoundError)) throw error;
    const running = error.running.length ? error.running.join(", ") : "none";
    out.push(
      fail("scanner.container", "Plex container", `No container named '${name}' (DOCKER_NAME). Running containers: ${running}.`, "Set DOCKER_NAME to the Plex container's name."),
      ...skipAfter(STEPS, "scanner.container", `No container '${name}'.`),
    );
    return out;
  }
  let layout: ScannerLayout;
  try {
    // Looked up through the archive API, which works on a stopped container too.
    const fallback = { ...NATIVE_LAYOUT, supportDir: "" };
    const resolved = await resolveLayout({ preset: config.PLEX_DOCKER_PRESET, container: name, explicit: explicitLayout(config), fallback, probe: executor });
    layout = resolved.layout;
    const found = await executor.stat(name, layout.scanner);
    if (!found || found.isDirectory) throw new Error(`No Plex Media Scanner at "${layout.scanner}" in container "${name}" (${resolved.reason}).`);
    out.push(ok("scanner.binary", "Plex scanner", `${layout.scanner} in '${name}' (preset ${resolved.preset}, ${resolved.reason}).`));
  } catch (error) {
    out.push(
      fail("scanner.binary", "Plex scanner", describeError(error), "Set PLEX_SCANNER to the scanner's path in the container, or PLEX_DOCKER_PRESET to the image's layout."),
      skip("scanner.user", "Scanner user", "The scanner was not found."),
    );
    return out;
  }
  if (state !== "running") return [...out, skip("scanner.user", "Scanner user", `Container '${name}' is not running.`)];
  const userExists = async (user: string): Promise<boolean | string> => {
    // runc refuses an exec whose User is not in the container's /etc/passwd (exit 126, "unable to find user").
    const result = await executor.exec(name, ["id", "-u"], { user, timeoutMs: 10_000 });
    if (result.exitCode === 0) return true;
    const said = `${result.stdout}${result.stderr}`;
    if (/unable to find user|no matching entries in passwd/i.test(said)) return false;
    return `'id' exited with ${result.exitCode}${said.trim() ? `: ${said.trim().split("\n")[0]}` : ""}`;
  };
  return [...out, await userCheck(layout.user, userExists, `in container '${name}'`)];
}

async function hostChecks(config: Config): Promise<CheckResult[]> {
  const explicit = explicitLayout(config);
  const { scanner, user } = { ...NATIVE_LAYOUT, ...explicit };
  const info = await stat(scanner).catch(() => undefined);
  const runnable = info?.isFile() === true && (await access(scanner, constants.X_OK).then(() => true, () => false));
  if (!runnable) {
    return [
      fail(
        "scanner.binary",
        "Plex scanner",
        `No runnable Plex Media Scanner at "${scanner}" on this host.`,
        "Set PLEX_SCANNER to the path of Plex Media Scanner on this host (or USE_DOCKER and DOCKER_NAME if Plex runs in a container).",
      ),
      skip("scanner.user", "Scanner user", "The scanner was not found."),
    ];
  }
  const how = explicit.scanner ? "PLEX_SCANNER" : "the Plex package's path";
  const found = ok("scanner.binary", "Plex scanner", `${scanner} on this host (${how}).`);
  // USE_SUDO: the scanner runs as PLEX_USER through sudo; else as autoscan's own user (no user to check).
  if (!config.USE_SUDO) return [found, ok("scanner.user", "Scanner user", "USE_SUDO is off: the scanner runs as autoscan's own user.")];
  return [found, await userCheck(user, hostUserExists, "on this host")];
}

/** `true`: the user exists; `false`: it does not; a string: could not tell, and why. */
async function userCheck(user: string, exists: (user: string) => Promise<boolean | string>, where: string): Promise<CheckResult> {
  if (user === "") return ok("scanner.user", "Scanner user", `The scanner runs as the default user (${where.replace(/^(in|on) /, "")}).`);
  const answer = await exists(user).catch((error: unknown) => describeError(error));
  if (answer === true) return ok("scanner.user", "Scanner user", `User '${user}' exists ${where}.`);
  if (answer === false) {
    return fail(
      "scanner.user",
      "Scanner user",
      `There is no user '${user}' (PLEX_USER) ${where}.`,
      "Set PLEX_USER to the user Plex runs as there (plex, abc, hotio, or a uid), or PLEX_DOCKER_PRESET to the image's layout.",
    );
  }
  return skip("scanner.user", "Scanner user", `Could not tell whether user '${user}' exists ${where}: ${answer}`);
}

async function hostUserExists(user: string): Promise<boolean | string> {
  const name = user.split(":")[0] ?? user;
  if (/^\d+$/.test(name)) return true;
  const passwd = await readFile("/etc/passwd", "utf8").catch(() => undefined);
  if (passwd === undefined) return "/etc/passwd cannot be read";
  return passwd.split("\n").some((line) => line.startsWith(`${name}:`));
}
