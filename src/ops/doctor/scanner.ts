import { describeError } from "../../core/errors.ts";
import { fail, ok, skip, type CheckResult } from "./check.ts";
import type { CheckFamily } from "./run-checks.ts";

/**
 * The scanner method (PLEX_SCAN_METHOD "scanner", or USE_DOCKER): the Docker engine answers, the Plex container exists
 * and runs, `Plex Media Scanner` is where the preset or PLEX_SCANNER says, and PLEX_USER exists there. The probe
 * (src/cli/wiring/doctor.ts) asks Docker through the same executor and preset detection the scans use.
 */
export type ContainerState =
  | { readonly kind: "found"; readonly state: string; readonly image: string }
  | { readonly kind: "missing"; readonly running: readonly string[] };

export interface ScannerLocation {
  readonly path: string;
  readonly user: string;
  /** How the layout was chosen (`preset hotio (auto: image …)`). */
  readonly how: string;
}

/** `true`: the user exists; `false`: it does not; a string: could not tell, and why. */
export type UserAnswer = boolean | string;

export interface DockerScannerProbe {
  readonly kind: "docker";
  readonly container: string;
  /** Where the engine is expected (`/var/run/docker.sock`, `tcp://…`). */
  readonly endpoint: string;
  /** Rejects with a message that names the fix when the engine cannot be reached. */
  ping(): Promise<void>;
  inspect(): Promise<ContainerState>;
  /** Rejects (with the fix in the message) when the binary is not found. */
  locateScanner(): Promise<ScannerLocation>;
  userExists(user: string): Promise<UserAnswer>;
}

export interface HostScannerProbe {
  readonly kind: "host";
  locateScanner(): Promise<ScannerLocation>;
  userExists(user: string): Promise<UserAnswer>;
  /** USE_SUDO: the scanner runs as PLEX_USER through sudo; else as autoscan's own user (no user to check). */
  readonly usesSudo: boolean;
}

export type ScannerProbe = DockerScannerProbe | HostScannerProbe;

export function scannerFamily(probe: ScannerProbe): CheckFamily {
  return { name: "scanner", run: () => (probe.kind === "docker" ? dockerChecks(probe) : hostChecks(probe)) };
}

async function dockerChecks(probe: DockerScannerProbe): Promise<CheckResult[]> {
  const name = probe.container;
  try {
    await probe.ping();
  } catch (error) {
    const reason = "The Docker engine did not answer.";
    return [
      fail("scanner.docker", "Docker", describeError(error), "Give autoscan the Docker socket (docker-compose.scanner.yml, or a socket proxy that allows exec), or set DOCKER_HOST."),
      skip("scanner.container", "Plex container", reason),
      skip("scanner.binary", "Plex scanner", reason),
      skip("scanner.user", "Scanner user", reason),
    ];
  }
  const out: CheckResult[] = [ok("scanner.docker", "Docker", `The Docker engine answers at ${probe.endpoint}.`)];
  const state = await probe.inspect();
  if (state.kind === "missing") {
    const running = state.running.length ? state.running.join(", ") : "none";
    out.push(
      fail("scanner.container", "Plex container", `No container named '${name}' (DOCKER_NAME). Running containers: ${running}.`, "Set DOCKER_NAME to the Plex container's name."),
      skip("scanner.binary", "Plex scanner", `No container '${name}'.`),
      skip("scanner.user", "Scanner user", `No container '${name}'.`),
    );
    return out;
  }
  const running = state.state === "running";
  out.push(
    running
      ? ok("scanner.container", "Plex container", `Container '${name}' is running (${state.image}).`)
      : fail("scanner.container", "Plex container", `Container '${name}' is ${state.state}: scans wait until it runs.`, `Start it: docker start ${name}.`),
  );
  let location: ScannerLocation;
  try {
    // Looked up through the archive API, which works on a stopped container too.
    location = await probe.locateScanner();
  } catch (error) {
    out.push(
      fail("scanner.binary", "Plex scanner", describeError(error), "Set PLEX_SCANNER to the scanner's path in the container, or PLEX_DOCKER_PRESET to the image's layout."),
      skip("scanner.user", "Scanner user", "The scanner was not found."),
    );
    return out;
  }
  out.push(ok("scanner.binary", "Plex scanner", `${location.path} in '${name}' (${location.how}).`));
  if (!running) {
    out.push(skip("scanner.user", "Scanner user", `Container '${name}' is not running.`));
    return out;
  }
  out.push(await userCheck(location.user, probe.userExists, `in container '${name}'`));
  return out;
}

async function hostChecks(probe: HostScannerProbe): Promise<CheckResult[]> {
  let location: ScannerLocation;
  try {
    location = await probe.locateScanner();
  } catch (error) {
    return [
      fail("scanner.binary", "Plex scanner", describeError(error), "Set PLEX_SCANNER to the path of Plex Media Scanner on this host (or USE_DOCKER and DOCKER_NAME if Plex runs in a container)."),
      skip("scanner.user", "Scanner user", "The scanner was not found."),
    ];
  }
  const out: CheckResult[] = [ok("scanner.binary", "Plex scanner", `${location.path} on this host (${location.how}).`)];
  if (!probe.usesSudo) {
    out.push(ok("scanner.user", "Scanner user", "USE_SUDO is off: the scanner runs as autoscan's own user."));
    return out;
  }
  out.push(await userCheck(location.user, probe.userExists, "on this host"));
  return out;
}

async function userCheck(user: string, exists: (user: string) => Promise<UserAnswer>, where: string): Promise<CheckResult> {
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
