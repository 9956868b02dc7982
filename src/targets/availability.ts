import { TargetAuthError, describeError } from "../core/errors.ts";
import type { Logger } from "../core/logger.ts";

/**
 * `Target.isAvailable()` for the HTTP targets: runs a cheap authenticated call and says whether the server can take
 * work, logging only when the state changes (a probe runs every few seconds while a server is down; one line when
 * it goes, one when it comes back). A rejected key is logged as an error naming the setting to fix.
 */
export interface AvailabilityOptions {
  /** Throws a classified error (see media-http.ts) when the server cannot take work. */
  readonly probe: () => Promise<void>;
  readonly log: Logger;
  /** `{ target: "jellyfin" }`, on every line. */
  readonly fields: Readonly<Record<string, unknown>>;
  /** `Jellyfin 'jellyfin'`. */
  readonly label: string;
  /** The setting(s) to check when the key is rejected: `TARGETS.jellyfin.TOKEN`. */
  readonly authKey: string;
}

export function createAvailabilityCheck(options: AvailabilityOptions): () => Promise<boolean> {
  const { log, fields, label } = options;
  let last: "up" | "down" | "auth" | undefined;
  return async () => {
    let state: "up" | "down" | "auth" = "up";
    let failure: unknown;
    try {
      await options.probe();
    } catch (error) {
      failure = error;
      state = error instanceof TargetAuthError ? "auth" : "down";
    }
    if (state !== last) {
      if (state === "auth") log.error({ ...fields, err: failure }, `${label} rejected the key: check ${options.authKey}`);
      else if (state === "down") log.warn({ ...fields, err: failure }, `${label} is not available (${describeError(failure)}); scans wait in the queue`);
      else if (last !== undefined) log.info(fields, `${label} is available again`);
    }
    last = state;
    return state === "up";
  };
}
