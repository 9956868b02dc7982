import type { Clock } from "../../core/clock.ts";
import { StoreUnavailableError } from "../../core/errors.ts";

/** How long the dispatcher waits before it looks at a store that refused a write again. */
export const STORE_RETRY_MS = 2_000;

/**
 * Records an outcome the queue must not forget (a scan the target already took, a file check's result), trying again
 * every `STORE_RETRY_MS` while the store cannot write (it logs that episode itself, once). A scan Plex accepted while
 * the disk was full is recorded once the disk takes writes again, instead of being sent again after recovery. Gives
 * up, rethrowing, only on shutdown: the folder then stays queued and is scanned again after the restart.
 */
export async function untilStored<T>(write: () => Promise<T>, clock: Clock, signal: AbortSignal): Promise<T> {
  for (;;) {
    try {
      return await write();
    } catch (error) {
      if (!(error instanceof StoreUnavailableError) || signal.aborted) throw error;
      await clock.sleep(STORE_RETRY_MS, signal);
    }
  }
}
