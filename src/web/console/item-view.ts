import type { QueueItemView, RequestView, TargetView } from "../../core/queue-view.ts";
import { escapeHtml } from "../../core/escape-html.ts";
import { csrfField, type ConsoleShell } from "./layout.ts";
import { duration, pathHtml, plural, timeTag } from "./format.ts";

/**
 * The parts of an item both the Queue and the History pages show: the requests merged into it, the result per
 * target, and the action buttons (each a small form that works without the script).
 */
export function requestsHtml(item: QueueItemView, now: number): string {
  const count = item.requests.length + item.requestsDropped;
  if (count === 0) return "";
  const rows = item.requests.map((request) => `<li>${requestLine(request, now)}</li>`).join("");
  const dropped = item.requestsDropped > 0 ? `<li class="muted">and ${plural(item.requestsDropped, "more request")} (not kept)</li>` : "";
  return `<details data-key="req-${item.id}"><summary>${plural(count, "request")} behind it</summary>
<ul class="requests">${rows}${dropped}</ul></details>`;
}

function requestLine(request: RequestView, now: number): string {
  const received = request.receivedPath && request.receivedPath !== request.path ? request.receivedPath : undefined;
  const flags = request.deleted ? ' <span class="badge muted">deleted</span>' : "";
  return `<b>${escapeHtml(request.source)}</b> · ${escapeHtml(request.event)}${flags} · ${timeTag(request.at, now)}<br>${pathHtml(request.path)}${
    received ? `<br><span class="muted small">received as </span>${pathHtml(received)}` : ""
  }`;
}

/** Each target's result: scanned (with Plex's detail), skipped (with the reason), or still to do. */
export function targetsHtml(item: QueueItemView, allTargets: readonly string[], now: number): string {
  const done = new Map(item.targets.map((t) => [t.target, t]));
  const names = [...new Set([...allTargets, ...done.keys()])];
  if (names.length === 0) return "";
  const rows = names.map((name) => `<li>${targetLine(name, done.get(name), item, now)}</li>`).join("");
  return `<ul class="targets" aria-label="Targets">${rows}</ul>`;
}

function targetLine(name: string, result: TargetView | undefined, item: QueueItemView, now: number): string {
  const label = `<b>${escapeHtml(name)}</b>`;
  if (result?.status === "scanned") {
    return `${label} <span class="badge ok">scanned</span> ${timeTag(result.at, now)}${landedHtml(result, now)}${refreshHtml(result, item)}${result.detail ? ` <span class="muted small">${escapeHtml(result.detail)}</span>` : ""}`;
  }
  if (result?.status === "skipped") {
    return `${label} <span class="badge warn">skipped</span> <span class="small">${escapeHtml(result.detail ?? "")}</span>`;
  }
  const failed = item.deliveries.find((d) => d.target === name);
  if (failed?.failed) return `${label} <span class="badge err">given up</span> <span class="small">${escapeHtml(failed.lastError)}</span>`;
  if (failed && item.state === "pending") {
    const when = failed.nextAttemptAt === undefined ? "" : ` next try ${timeTag(failed.nextAttemptAt, now)}`;
    return `${label} <span class="badge warn">retrying</span>${when} <span class="small">${escapeHtml(failed.lastError)}</span>`;
  }
  if (item.state === "failed") return `${label} <span class="badge err">not scanned</span>`;
  if (item.state === "done") return `${label} <span class="badge muted">not asked</span>`;
  return `${label} <span class="badge muted">to do</span>`;
}

/** Whether the server's library shows the files since (the landed check): a badge, and the time or the reason. */
function landedHtml(result: TargetView, now: number): string {
  switch (result.landed) {
    case undefined:
      return "";
    case "landed":
      return ` <span class="badge ok" title="The server's library shows the requested files">landed</span>${
        result.landedAfterMs === undefined ? "" : ` <span class="small">visible ${escapeHtml(duration(result.landedAfterMs))} after the request</span>`
      }`;
    case "pending":
      return ` <span class="badge info" title="The server's library is asked for the files after its scan">checking</span> <span class="small">${pendingLook(result, now)}</span>${
        result.landedReason ? ` <span class="small muted why">missing: ${escapeHtml(result.landedReason)}</span>` : ""
      }`;
    case "not_visible":
      return ` <span class="badge err">not visible</span> <span class="small why">${escapeHtml(result.landedReason ?? "")}</span>`;
    case "not_checked":
      return ` <span class="badge muted">not checked</span>${result.landedReason ? ` <span class="small muted">${escapeHtml(result.landedReason)}</span>` : ""}`;
  }
}

/** Refresh in place on this target: refreshed (what was sent), not refreshed (why), or still to come after the look. */
function refreshHtml(result: TargetView, item: QueueItemView): string {
  if (result.refresh === "refreshed") {
    return ` <span class="badge ok" title="The item was re-read in place after the scan">refreshed</span>${result.refreshDetail ? ` <span class="small">${escapeHtml(result.refreshDetail)}</span>` : ""}`;
  }
  if (result.refresh === "not_refreshed") {
    return ` <span class="badge warn">not refreshed</span> <span class="small why">${escapeHtml(result.refreshDetail ?? "")}</span>`;
  }
  if (item.refresh && result.landed === "pending") return ` <span class="badge muted" title="Sent once the item is visible">refresh to come</span>`;
  return "";
}

/**
 * Where a pending landed check stands, in words: before the first look; after a look that did not find every file
 * (the library had not shown them yet: the target may still be reading them); after a second one, which queued a
 * rescan of them. Then when the next look is.
 */
function pendingLook(result: TargetView, now: number): string {
  const looks = result.landedLooks ?? (result.landedReason ? 1 : 0);
  const next = result.landedCheckAt === undefined ? "" : `next look ${timeTag(result.landedCheckAt, now)}`;
  if (looks === 0) return result.landedCheckAt === undefined ? "first look to come" : `first look ${timeTag(result.landedCheckAt, now)}`;
  const missed = looks === 1 ? "not in its library yet at the first look" : "still not in its library at the second look; a rescan of the files is queued";
  return next === "" ? missed : `${missed} · ${next}`;
}

export type ItemAction = "scan" | "retry" | "delete" | "refresh";

const ACTION_LABELS: Readonly<Record<ItemAction, string>> = { scan: "Scan now", retry: "Retry", delete: "Delete", refresh: "Refresh" };

/** What the button says: a finished folder is scanned again; a failed one is retried. */
function actionLabel(item: QueueItemView, action: ItemAction): string {
  return action === "retry" && item.state === "done" ? "Scan again" : ACTION_LABELS[action];
}

/** One action as a form: POST `/<pass>/items/<id>/<action>`, back to `back` when answered without the script. */
export function actionForm(shell: ConsoleShell, item: QueueItemView, action: ItemAction, back: string): string {
  const confirm = action === "delete" ? ` data-confirm="${escapeHtml(`Delete ${item.folder} from the ${item.state === "pending" ? "queue" : "history"}?`)}"` : "";
  const style = action === "delete" ? "danger" : action === "scan" ? "primary" : "";
  return `<form class="inline" method="post" action="${escapeHtml(`${shell.base}/items/${item.id}/${action}`)}" data-action${confirm}>
${csrfField(shell)}<input type="hidden" name="back" value="${escapeHtml(back)}">
<button type="submit" class="${style}" data-focus="${action}" aria-label="${escapeHtml(`${actionLabel(item, action)}: ${item.folder}`)}">${actionLabel(item, action)}</button></form>`;
}
