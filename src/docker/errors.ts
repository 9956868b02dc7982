import { TargetConfigError, TargetUnavailableError } from "../core/errors.ts";

/**
 * Errors of the Docker exec path. The ones a user fixes outside autoscan while work waits are target-wide: the socket
 * and a stopped container are `TargetUnavailableError`s (retried with backoff), a container or scanner that is not
 * where the configuration says is a `TargetConfigError` (the whole target is held and retried slowly, as for a
 * rejected token, instead of failing every folder on its own). Their messages say what to do.
 */

/** The Docker engine cannot be reached (no socket, permission denied, refused). */
export class DockerUnreachableError extends TargetUnavailableError {
  override name = "DockerUnreachableError";
}

/** No container by that name (DOCKER_NAME is wrong, or the container is being re-created). */
export class ContainerNotFoundError extends TargetConfigError {
  override name = "ContainerNotFoundError";
  readonly container: string;
  readonly running: readonly string[];
  constructor(container: string, running: readonly string[], options?: ErrorOptions) {
    const list = running.length > 0 ? running.join(", ") : "none";
    super(
      `No container named "${container}" (DOCKER_NAME). Running containers: ${list}. ` +
        "Set DOCKER_NAME to the Plex container's name.",
      options,
    );
    this.container = container;
    this.running = running;
  }
}

/** The container exists but is stopped, paused or restarting: retry later. */
export class ContainerNotRunningError extends TargetUnavailableError {
  override name = "ContainerNotRunningError";
  readonly container: string;
  readonly state: string;
  constructor(container: string, state: string, options?: ErrorOptions) {
    super(`Container "${container}" is ${state}; the scan will be retried once it is running`, options);
    this.container = container;
    this.state = state;
  }
}

/** We stopped waiting for a command: it may still be running (the Docker exec API cannot stop it). */
export class ExecAbandonedError extends Error {
  override name = "ExecAbandonedError";
  /** The process id as Docker reports it (host pid namespace), when known. */
  readonly pid: number | undefined;
  constructor(message: string, pid: number | undefined, options?: ErrorOptions) {
    super(message, options);
    this.pid = pid;
  }
}

/** The command ran longer than its timeout. */
export class ExecTimeoutError extends ExecAbandonedError {
  override name = "ExecTimeoutError";
}

/** The caller's signal aborted (shutdown) before the command finished. */
export class ExecInterruptedError extends ExecAbandonedError {
  override name = "ExecInterruptedError";
}

/** The scanner binary is not where we looked (exit 126/127, or no file at any preset's path). */
export class ScannerNotFoundError extends TargetConfigError {
  override name = "ScannerNotFoundError";
}
