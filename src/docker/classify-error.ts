import { ContainerNotFoundError, ContainerNotRunningError, DockerUnreachableError } from "./errors.ts";

/**
 * Maps what dockerode throws onto errors a user can act on. dockerode errors carry `statusCode` and a message like
 * `(HTTP code 404) no such container - No such container: plex ` (integrations.md §5.2); connection failures are
 * Node system errors (`ENOENT`, `EACCES`, `ECONNREFUSED` …) with the socket path in `address`.
 */
export interface ClassifyContext {
  /** The container we were talking to, if any. */
  readonly container?: string;
  /** Where we expected the engine (`/var/run/docker.sock`, `tcp://…`). */
  readonly endpoint: string;
  /** Names of running containers, for the "no such container" message (best effort). */
  readonly listRunning: () => Promise<string[]>;
  /** The container's state (`exited`, `restarting`, `paused` …), for the 409 message (best effort). */
  readonly stateOf: (container: string) => Promise<string | undefined>;
}

const MOUNT_HINT =
  "give the autoscan container the Docker socket for scanner mode " +
  "(docker compose -f docker-compose.yml -f docker-compose.scanner.yml up -d), " +
  "or set DOCKER_HOST to a socket proxy that allows exec (docs/operations.md: Docker)";

export async function classifyDockerError(error: unknown, context: ClassifyContext): Promise<Error> {
  const err = error as { code?: unknown; statusCode?: unknown; address?: unknown; message?: unknown };
  const connection = classifyConnectionError(err, context.endpoint, error);
  if (connection) return connection;
  const status = typeof err.statusCode === "number" ? err.statusCode : undefined;
  const detail = daemonMessage(error);
  if (status === 404 && context.container && /no such container/i.test(detail)) {
    const running = await context.listRunning().catch(() => [] as string[]);
    return new ContainerNotFoundError(context.container, running, { cause: error });
  }
  if (status === 409 && context.container) {
    const state = await context.stateOf(context.container).catch(() => undefined);
    return new ContainerNotRunningError(context.container, describeState(state, detail), { cause: error });
  }
  if (status !== undefined) return new Error(`Docker engine answered ${status}: ${detail}`, { cause: error });
  return error instanceof Error ? error : new Error(String(error));
}

function classifyConnectionError(
  err: { code?: unknown; address?: unknown },
  endpoint: string,
  cause: unknown,
): Error | undefined {
  const where = typeof err.address === "string" ? err.address : endpoint;
  switch (err.code) {
    case "ENOENT":
      return new DockerUnreachableError(`No Docker socket at ${where}: ${MOUNT_HINT}`, { cause });
    case "EACCES":
    case "EPERM":
      return new DockerUnreachableError(
        `Permission denied on the Docker socket ${where}: run autoscan with the socket's group ` +
          `(group_add: the gid from \`stat -c %g ${where}\`), and ${MOUNT_HINT}`,
        { cause },
      );
    case "ECONNREFUSED":
    case "ECONNRESET":
    case "ENOTFOUND":
    case "EHOSTUNREACH":
    case "ETIMEDOUT":
    case "EPIPE":
      return new DockerUnreachableError(
        `Cannot reach the Docker engine at ${where} (${String(err.code)}): is Docker running? ` +
          `If autoscan runs in a container, ${MOUNT_HINT}`,
        { cause },
      );
    default:
      return undefined;
  }
}

/** The daemon's own words from a dockerode error (`No such container: plex`). */
export function daemonMessage(error: unknown): string {
  const json = (error as { json?: unknown }).json;
  if (json && typeof json === "object" && typeof (json as { message?: unknown }).message === "string") {
    return ((json as { message: string }).message).trim();
  }
  const message = error instanceof Error ? error.message : String(error);
  const dash = message.indexOf(" - ");
  return (dash >= 0 ? message.slice(dash + 3) : message).trim();
}

/** `restarting`, `paused`, `not running (exited)` … for ContainerNotRunningError. */
export function describeState(state: string | undefined, detail: string): string {
  switch (state) {
    case "restarting":
      return "restarting";
    case "paused":
      return "paused";
    case "exited":
    case "created":
    case "dead":
      return `not running (${state})`;
    case "running":
      // It was not running a moment ago (the daemon said 409): it is coming back.
      return `not ready yet (${detail})`;
    default:
      return `not running (${detail})`;
  }
}
