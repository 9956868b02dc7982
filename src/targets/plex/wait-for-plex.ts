import type { Clock } from "../../core/clock.ts";
import { TargetAuthError, TargetUnavailableError } from "../../core/errors.ts";
import type { Logger } from "../../core/logger.ts";
import type { PlexClient, PlexServerInfo } from "./client.ts";

/**
 * `PLEX_CHECK_BEFORE_SCAN`: wait until Plex answers before scanning. plex_autoscan looped forever (15 s apart); here
 * the wait is bounded and then becomes TargetUnavailableError, so the queue keeps the scan and retries it later
 * instead of one request holding the dispatcher hostage. A rejected token is not waited out.
 */
export interface WaitForPlexOptions {
  readonly client: Pick<PlexClient, "serverInfo">;
  readonly clock: Clock;
  readonly log: Logger;
  readonly pollMs: number;
  readonly maxMs: number;
  readonly signal?: AbortSignal;
}

export async function waitForPlex(options: WaitForPlexOptions): Promise<PlexServerInfo> {
  const { client, clock, log, signal } = options;
  const started = clock.now();
  for (let attempt = 1; ; attempt++) {
    try {
      const info = await client.serverInfo(signal);
      log.info(
        { version: info.version },
        `Plex is available for media scanning - (Server: '${info.friendlyName}', version ${info.version})`,
      );
      return info;
    } catch (error) {
      if (error instanceof TargetAuthError || !(error instanceof TargetUnavailableError)) throw error;
      const waited = clock.now() - started;
      if (waited >= options.maxMs || signal?.aborted) {
        throw new TargetUnavailableError(
          `Plex did not become available within ${Math.round(waited / 1000)} s: ${error.message}`,
          { cause: error },
        );
      }
      log.warn(
        { attempt, err: error },
        `Plex is not available for media scanning. Checking again in ${Math.round(options.pollMs / 1000)} seconds...`,
      );
      await clock.sleep(Math.min(options.pollMs, options.maxMs - waited), signal);
    }
  }
}
