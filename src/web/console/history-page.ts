import type { HistoryQuery, QueueItemView } from "../../core/queue-view.ts";
import { escapeHtml } from "../../core/escape-html.ts";
import { duration, pathHtml, plural, timeTag } from "./format.ts";
import { actionForm, requestsHtml, targetsHtml } from "./item-view.ts";
import { csrfField, renderConsolePage, type ConsoleShell } from "./layout.ts";
import { noticeHtml, type ActionAnswer } from "./notice.ts";
import { pager } from "./pager.ts";
import { remapOfferHtml } from "./remap-offer.ts";

/** The History page: finished and failed folders, newest first, filtered and paged; retry and delete. */
export interface HistoryPageModel {
  readonly shell: ConsoleShell;
  readonly items: readonly QueueItemView[];
  readonly total: number;
  readonly query: HistoryQuery & { readonly offset: number };
  readonly pageSize: number;
  /** Every source kept, for the filter. */
  readonly sources: readonly string[];
  /** Failed folders in all (for "Retry all failed"). */
  readonly failedCount: number;
  readonly now: number;
  readonly targets: readonly string[];
  readonly self: string;
  readonly notice?: ActionAnswer;
  /** Requests refused for lack of a mapping that SERVER_PATH_MAPPINGS reach now (`remap-offer.ts`). */
  readonly remapped?: number;
}

export function renderHistoryPage(model: HistoryPageModel): string {
  const { query } = model;
  const filtered = Boolean(query.state || query.source || query.search || query.landed);
  const list =
    model.items.length === 0
      ? `<p class="empty">${filtered ? "No folder matches these filters." : "No scans have finished yet."}</p>`
      : `<ul class="items">${model.items.map((item) => itemHtml(model, item)).join("")}</ul>`;
  const params = new URLSearchParams();
  if (query.state) params.set("state", query.state);
  if (query.source) params.set("source", query.source);
  if (query.search) params.set("q", query.search);
  if (query.landed) params.set("landed", query.landed);
  const body = `${noticeHtml(model.notice)}
${remapOfferHtml(model.shell, model.self, model.remapped)}
${filtersHtml(model)}
<section class="panel" aria-labelledby="history-title">
<div id="history-list" data-live>
<div class="toolbar"><h2 id="history-title">${escapeHtml(plural(model.total, "folder"))}${filtered ? " match" : ""}</h2>${retryAllHtml(model)}</div>
${list}
${pager(`${model.shell.base}/history`, params, query.offset, model.pageSize, model.total, "folders")}
</div>
</section>`;
  return renderConsolePage({
    shell: model.shell,
    active: "history",
    title: "History",
    lead: "Scanned and failed folders, newest first, with each target's result and the requests behind them.",
    body,
    live: true,
  });
}

function filtersHtml(model: HistoryPageModel): string {
  const { query } = model;
  const option = (value: string, label: string, selected: boolean): string =>
    `<option value="${escapeHtml(value)}"${selected ? " selected" : ""}>${escapeHtml(label)}</option>`;
  const states = [option("", "All", !query.state), option("done", "Scanned", query.state === "done"), option("failed", "Failed", query.state === "failed")];
  const landed = LANDED_FILTERS.map(([value, label]) => option(value, label, (query.landed ?? "") === value));
  const sources = [option("", "All sources", !query.source), ...model.sources.map((s) => option(s, s, s === query.source))];
  if (query.source && !model.sources.includes(query.source)) sources.push(option(query.source, query.source, true));
  return `<form class="filters" id="filters" method="get" action="${escapeHtml(`${model.shell.base}/history`)}" role="search">
<div class="field grow"><label for="q">Path contains</label><input id="q" name="q" type="search" value="${escapeHtml(query.search ?? "")}"
 placeholder="Breaking Bad" autocapitalize="off" autocorrect="off" spellcheck="false" maxlength="500"></div>
<div class="field"><label for="state">Result</label><select id="state" name="state">${states.join("")}</select></div>
<div class="field"><label for="source">Source</label><select id="source" name="source">${sources.join("")}</select></div>
<div class="field"><label for="landed">In the library</label><select id="landed" name="landed">${landed.join("")}</select></div>
<button type="submit" class="primary">Filter</button>
${query.state || query.source || query.search || query.landed ? `<a class="btn" href="${escapeHtml(`${model.shell.base}/history`)}">Clear</a>` : ""}
</form>`;
}

/** The landed filter: which deliveries the server's library was found to show (or not). */
const LANDED_FILTERS: readonly (readonly [string, string])[] = [
  ["", "Any"],
  ["not_visible", "Not visible"],
  ["landed", "Landed"],
  ["pending", "Still checking"],
  ["not_checked", "Not checked"],
];

function retryAllHtml(model: HistoryPageModel): string {
  if (model.failedCount === 0) return "";
  return `<form class="inline" method="post" action="${escapeHtml(`${model.shell.base}/history/retry-failed`)}" data-action>
${csrfField(model.shell)}<input type="hidden" name="back" value="${escapeHtml(model.self)}">
<button type="submit" data-focus="retry-failed">Retry all failed (${model.failedCount.toLocaleString("en-US")})</button></form>`;
}

function itemHtml(model: HistoryPageModel, item: QueueItemView): string {
  const { now } = model;
  const failed = item.state === "failed";
  const finished = item.finishedAt ?? item.lastRequestAt;
  const facts = [
    `<li>${failed ? '<span class="badge err">Failed</span>' : '<span class="badge ok">Scanned</span>'}</li>`,
    `<li>${failed ? "Gave up" : "Finished"} ${timeTag(finished, now)}</li>`,
    `<li title="From the first request to the last target's answer">Took <b class="num">${escapeHtml(duration(Math.max(0, finished - item.firstRequestAt)))}</b></li>`,
    item.attempts > 0 ? `<li>Failed attempts <b class="num">${item.attempts}</b></li>` : "",
    item.fileChecks > 0 ? `<li>File checks <b class="num">${item.fileChecks}</b></li>` : "",
  ].join("");
  const scanFolder = item.scanFolder && item.scanFolder !== item.folder ? `<p class="small muted">Scanned ${pathHtml(item.scanFolder)}</p>` : "";
  const reason = failed && item.lastError ? `<p class="reason"><b>Why:</b> ${escapeHtml(item.lastError)}</p>` : "";
  return `<li class="item" data-key="item-${item.id}">
<div><p class="folder">${pathHtml(item.folder)}</p>${scanFolder}
<ul class="facts">${facts}</ul>
${reason}${targetsHtml(item, model.targets, now)}${requestsHtml(item, now)}</div>
<div class="actions">${actionForm(model.shell, item, "retry", model.self)}${actionForm(model.shell, item, "refresh", model.self)}${actionForm(model.shell, item, "delete", model.self)}</div>
</li>`;
}
