import type { QueueItemView } from "../../core/queue-view.ts";
import { escapeHtml } from "../../core/escape-html.ts";
import { pager } from "./pager.ts";
import { pathHtml, plural, timeTag } from "./format.ts";
import { actionForm, requestsHtml, targetsHtml } from "./item-view.ts";
import { renderConsolePage, type ConsoleShell } from "./layout.ts";
import { noticeHtml, type ActionAnswer } from "./notice.ts";
import type { Activity, RefusedPaths, WatcherView } from "./sources.ts";
import type { BackfillAppStatus } from "../../core/backfill-status.ts";
import { watchPanel } from "./watch-panel.ts";
import { csrfField } from "./layout.ts";
import { backfillPanel } from "./backfill-panel.ts";
import { remapOfferHtml } from "./remap-offer.ts";

/** The Queue page: the waiting folders in dispatch order, what each waits for, and the actions on them. */
export interface QueuePageModel {
  readonly shell: ConsoleShell;
  readonly items: readonly QueueItemView[];
  readonly total: number;
  readonly offset: number;
  readonly pageSize: number;
  readonly now: number;
  readonly activity: Activity;
  readonly targets: readonly string[];
  /** This page's URL (path and query), where actions come back to. */
  readonly self: string;
  readonly notice?: ActionAnswer;
  /** `ARR`: each app's backfill state. */
  readonly backfill?: readonly BackfillAppStatus[];
  /** plex_autoscan's queue being imported: rows done and in all. */
  readonly importing?: { readonly done: number; readonly total: number };
  /** Paths refused at intake (no mapping, no library), newest first, until dismissed. */
  readonly refused?: ReturnType<RefusedPaths["recent"]>;
  /** Requests refused for lack of a mapping that SERVER_PATH_MAPPINGS reach now (`remap-offer.ts`). */
  readonly remapped?: number;
  /** *arr apps that stopped sending to autoscan. */
  readonly arrProblems?: readonly { readonly app: string; readonly detail: string; readonly since: number }[];
  /** *arr apps that send, with some of autoscan's events unticked (a quieter note than the banner). */
  readonly arrNotes?: readonly { readonly app: string; readonly detail: string; readonly since: number }[];
  /** `WATCH`: the folder watchers. */
  readonly watchers?: readonly WatcherView[];
}

export function renderQueuePage(model: QueuePageModel): string {
  const list =
    model.items.length === 0
      ? `<p class="empty">${model.total === 0 ? "Nothing is waiting. New requests appear here as they arrive." : "No folders on this page."}</p>`
      : `<ul class="items">${model.items.map((item) => itemHtml(model, item)).join("")}</ul>`;
  const body = `${noticeHtml(model.notice)}
<div id="arr-status" data-live>${arrProblemsHtml(model)}${arrNotesHtml(model)}</div>
${remapOfferHtml(model.shell, model.self, model.remapped)}${refusedHtml(model)}
<section class="panel" aria-labelledby="queue-title">
<div id="queue-list" data-live>
${importingHtml(model.importing)}
<div class="toolbar"><h2 id="queue-title">${escapeHtml(plural(model.total, "folder"))} waiting</h2>${scanningLine(model.activity)}</div>
${list}
${pager(model.shell.base + "/queue", new URLSearchParams(), model.offset, model.pageSize, model.total, "folders")}
</div>
</section>
${model.watchers && model.watchers.length > 0 ? watchPanel(model.watchers, model.now) : ""}
${model.backfill ? backfillPanel(model.backfill, model.now) : ""}`;
  return renderConsolePage({
    shell: model.shell,
    active: "queue",
    title: "Queue",
    lead: "Folders waiting for their scan, next first. A request for a folder already waiting merges into it.",
    body,
    live: true,
  });
}

/**
 * While plex_autoscan's queue is imported (at the first start after a move), how far it got; inside the live part,
 * so it counts up and goes away by itself.
 */
function importingHtml(importing: QueuePageModel["importing"]): string {
  if (!importing) return "";
  const done = importing.done.toLocaleString("en-US");
  const total = importing.total.toLocaleString("en-US");
  return (
    `<section class="flash ok" role="status"><h2>Importing plex_autoscan's queue</h2><p>${done} of ${total} rows done. ` +
    "What is stored appears below as it goes; webhooks are taken meanwhile.</p></section>"
  );
}

/** *arr apps whose connection to autoscan is missing, off, pointing elsewhere, or held after failures. */
function arrProblemsHtml(model: QueuePageModel): string {
  const problems = model.arrProblems ?? [];
  if (problems.length === 0) return "";
  const rows = problems
    .map((p) => `<li><b>${escapeHtml(p.app)}</b> (${timeTag(p.since, model.now)}): ${escapeHtml(p.detail)} <b>Fix:</b> <code>autoscan arr connect --app ${escapeHtml(p.app)}</code></li>`)
    .join("");
  return `<section class="flash err" role="alert" aria-labelledby="arr-title">
<h2 id="arr-title">${problems.length === 1 ? "An app does not send" : `${String(problems.length)} apps do not send`} ${problems.length === 1 ? "its" : "their"} imports to autoscan</h2>
<ul class="refused">${rows}</ul>
</section>`;
}

/** *arr apps that send with some events unticked: often on purpose, so one quiet line each, not the banner. */
function arrNotesHtml(model: QueuePageModel): string {
  return (model.arrNotes ?? [])
    .map(
      (n) =>
        `<p class="muted" role="status"><b>${escapeHtml(n.app)}</b> sends to autoscan, with some events unticked: ${escapeHtml(n.detail)} ` +
        `If that is not on purpose: <code>autoscan arr connect --app ${escapeHtml(n.app)}</code></p>`,
    )
    .join("");
}

/**
 * Paths that were not queued because no server can scan them (no SERVER_PATH_MAPPINGS form, no library): on top, with
 * the reason and the fix, until dismissed. They are in History as failed too.
 */
function refusedHtml(model: QueuePageModel): string {
  const refused = model.refused ?? [];
  if (refused.length === 0) return "";
  const shown = refused.slice(0, 5);
  const rows = shown
    .map((r) => `<li><span class="path">${escapeHtml(r.path)}</span> <span class="muted">(${escapeHtml(r.source)}, ${timeTag(r.at, model.now)})</span><br>${escapeHtml(r.reason)} <b>Fix:</b> ${escapeHtml(r.fix)}</li>`)
    .join("");
  const more = refused.length > shown.length ? `<p class="muted">and ${plural(refused.length - shown.length, "more path")}: see History, state failed.</p>` : "";
  return `<section class="flash warn" role="status" aria-labelledby="refused-title">
<h2 id="refused-title">${escapeHtml(plural(refused.length, "path"))} not queued: no server can scan ${refused.length === 1 ? "it" : "them"}</h2>
<ul class="refused">${rows}</ul>${more}
<form method="post" action="${escapeHtml(`${model.shell.base}/refused/dismiss`)}">${csrfField(model.shell)}<input type="hidden" name="back" value="${escapeHtml(model.self)}"><button type="submit">Dismiss</button></form>
</section>`;
}

function scanningLine(activity: Activity): string {
  const count = new Set(activity.scanning.map((s) => s.id)).size;
  return count === 0 ? "" : `<span class="badge info">${escapeHtml(plural(count, "scan"))} in progress</span>`;
}

function itemHtml(model: QueuePageModel, item: QueueItemView): string {
  const { now } = model;
  const scanning = model.activity.scanning.filter((s) => s.id === item.id).map((s) => s.target);
  const checking = model.activity.checking.includes(item.id);
  const anchor = model.activity.held?.find((h) => h.id === item.id)?.anchor;
  const mount = model.activity.waitingForMount?.find((h) => h.id === item.id)?.mount;
  const facts = [
    `<li>${stateBadge(item, now, scanning, checking, anchor, mount)}</li>`,
    dueFact(item, now),
    item.fileChecks > 0 ? `<li>File checks <b class="num">${item.fileChecks}</b></li>` : "",
    item.attempts > 0 ? `<li>Failed attempts <b class="num">${item.attempts}</b></li>` : "",
    item.priority !== 0 ? `<li>Priority <b class="num">${item.priority}</b></li>` : "",
    `<li>First request ${timeTag(item.firstRequestAt, now)}</li>`,
  ].join("");
  const scanFolder = item.scanFolder && item.scanFolder !== item.folder ? `<p class="small muted">Scans ${pathHtml(item.scanFolder)}</p>` : "";
  // Keyed by a path no one said the kind of (a manual request), not found on disk yet: it is not a folder to scan.
  const unresolved = item.requests.length > 0 && item.requests.every((r) => r.kind === "unknown" && !r.deleted) && !item.scanFolder;
  const note = unresolved ? `<p class="small muted">Not on disk yet: a file joins its folder's scan once it appears; a folder is scanned as it is.</p>` : "";
  const error = item.lastError ? `<p class="reason"><b>Last error:</b> ${escapeHtml(item.lastError)}</p>` : "";
  return `<li class="item" data-key="item-${item.id}">
<div><p class="folder">${pathHtml(item.folder)}</p>${scanFolder}${note}
<ul class="facts">${facts}</ul>
${targetsHtml(item, model.targets, now)}${error}${requestsHtml(item, now)}</div>
<div class="actions">${actionForm(model.shell, item, "scan", model.self)}${actionForm(model.shell, item, "delete", model.self)}</div>
</li>`;
}

function stateBadge(
  item: QueueItemView,
  now: number,
  scanning: readonly string[],
  checking: boolean,
  anchor?: string,
  mount?: string,
): string {
  if (scanning.length > 0) return `<span class="badge info">scanning (${escapeHtml(scanning.join(", "))})</span>`;
  if (checking) return `<span class="badge info">checking files</span>`;
  if (anchor !== undefined) return `<span class="badge warn">waiting for anchor ${escapeHtml(anchor)}</span>`;
  if (mount !== undefined) return `<span class="badge warn">waiting for mount ${escapeHtml(mount)} (it does not answer)</span>`;
  if (item.attempts > 0) return `<span class="badge warn">retrying</span>`;
  const at = Math.max(item.dueAt, item.nextAttemptAt ?? 0);
  if (at > now) return item.fileChecks > 0 && item.nextAttemptAt ? `<span class="badge muted">file not there yet</span>` : `<span class="badge muted">waiting</span>`;
  return `<span class="badge info">due</span>`;
}

function dueFact(item: QueueItemView, now: number): string {
  const at = Math.max(item.dueAt, item.nextAttemptAt ?? 0);
  const label = item.nextAttemptAt && item.nextAttemptAt > item.dueAt ? (item.attempts > 0 ? "Next attempt" : "Next file check") : "Due";
  return `<li>${label} ${timeTag(at, now)}</li>`;
}
