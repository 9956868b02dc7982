/**
 * Error classes whose names tell the caller what to do. Classify where the error enters (the Plex client, the config
 * loader, the request parser); handle in one place (the dispatcher loop, Hono's onError, the CLI's main).
 */

/** The configuration is wrong: stop with the message (exit 2). `problems` lists every problem found. */
export class ConfigError extends Error {
  override name = "ConfigError";
  readonly problems: readonly string[];
  constructor(message: string, problems: readonly string[] = [], options?: ErrorOptions) {
    super(message, options);
    this.problems = problems;
  }
}

/** The command line is wrong: print usage, exit 2. */
export class UsageError extends Error {
  override name = "UsageError";
}

/** The request is wrong: answer 4xx with this message. */
export class BadRequestError extends Error {
  override name = "BadRequestError";
  readonly status: 400 | 404 | 405 | 413 | 415;
  constructor(message: string, status: 400 | 404 | 405 | 413 | 415 = 400, options?: ErrorOptions) {
    super(message, options);
    this.status = status;
  }
}

/** The target (media server, container) cannot take work now: retry later with backoff. */
export class TargetUnavailableError extends Error {
  override name = "TargetUnavailableError";
}

/** The target rejected our credentials (e.g. a wrong Plex token): a config problem, retried slowly and logged loudly. */
export class TargetAuthError extends Error {
  override name = "TargetAuthError";
}

/**
 * The target is set up wrong in a way no retry of one folder fixes (the scanner binary is not where
 * `PLEX_SCANNER` says, the container does not exist, the user is unknown): hold the whole target, retry slowly, log
 * loudly, as for rejected credentials.
 */
export class TargetConfigError extends Error {
  override name = "TargetConfigError";
}

/**
 * The scan queue cannot store anything now (disk full, read-only, removed …): nothing of the request was stored, and
 * nothing will be. Answer 503; the queue retries by itself and takes requests again once it can write, and it logs
 * the problem once per episode, so callers need not.
 */
export class StoreUnavailableError extends Error {
  override name = "StoreUnavailableError";
}

/** Something that cannot go on (a corrupt store that cannot be moved aside, …): stop the process. */
export class FatalError extends Error {
  override name = "FatalError";
}

/** A readable one-line description of any thrown value. */
export function describeError(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}
