import type { Target } from "../core/target.ts";
import type { WorkItem } from "../queue/dispatch/dispatch-port.ts";
import { isRescanRequest, namesFile, type LandedStart } from "../queue/rules/landed.ts";

/**
 * Whether a target's scan of a folder gets a landed check, decided as the scan is recorded: only when checking is on
 * (`SERVER_CONFIRM_LANDED`), the target can be asked (Plex, Jellyfin, Emby; not a chained autoscan) and a request named
 * a file (a folder alone says nothing about which files to look for). The first look waits for the server's own
 * delay (`LibraryLookup.settleMs`). A folder whose requests are all a landed check's own rescan gets no look of its
 * own (`undefined`): the look that queued the rescan looks a last time after it.
 */
export function landedStart(confirm: boolean, target: Target, item: WorkItem): LandedStart | undefined {
  if (item.requests.length > 0 && item.requests.every(isRescanRequest)) return undefined;
  if (!confirm) return { look: false, reason: "checking is off (SERVER_CONFIRM_LANDED)" };
  if (!target.lookup) return { look: false, reason: `'${target.name}' cannot be asked which files its library holds` };
  if (!item.requests.some((request) => namesFile(request, item.folder))) return { look: false, reason: "the request named a folder only" };
  return { look: true, inMs: target.lookup.settleMs };
}
