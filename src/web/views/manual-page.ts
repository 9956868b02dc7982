import { renderPreviewFacts, renderPreviewProblems } from "../console/preview-view.ts";
import { renderConsolePage, type ConsoleShell } from "../console/layout.ts";
import type { PathPreview } from "../console/sources.ts";
import { escapeHtml } from "../../core/escape-html.ts";

/**
 * The Scan page (`GET /<SERVER_PASS>`, plex_autoscan's manual page) in the console's layout: one path, one button,
 * and after a submit what happened to it. With the path preview, the page's own form queues nothing that would not
 * be scanned as expected (no mapping and no Plex library, …) until the user confirms: it shows why, how to fix it,
 * and a "Queue anyway" button. Works without JavaScript (a plain form post to the same URL).
 */
export type PageResult =
  | {
      readonly kind: "queued";
      readonly sent: string;
      readonly path: string;
      readonly folder: string;
      readonly merged: boolean;
      readonly mappedFrom?: string;
      /** Where the path lands, when the preview is available. */
      readonly preview?: PathPreview;
    }
  /** The preview found problems: nothing was queued; the user may confirm. */
  /** `refresh`: the refresh in place asked, kept for "Queue anyway". */
  | { readonly kind: "held"; readonly sent: string; readonly preview: PathPreview; readonly refresh?: string }
  /** `reason` completes "… was not queued because …". */
  | { readonly kind: "ignored"; readonly path: string; readonly reason: string }
  | { readonly kind: "refused"; readonly reason: string };

export interface ManualPageModel {
  readonly shell: ConsoleShell;
  readonly result?: PageResult;
  /** What the input shows: the last path sent, so that a typo can be fixed instead of retyped. */
  readonly value?: string;
  readonly queueCount?: number;
  /** The "Connect your apps" panel (views/connect-panel.ts), on the page a GET shows. */
  readonly connect?: string;
}

const TITLE = "Manual scan";
const LEAD = "Queue a scan of one file or folder. The page shows where the path lands: its mapping, Plex library and folder.";

export function renderManualPage(model: ManualPageModel): string {
  const body = `${model.result ? renderResult(model.result) : ""}
<section class="panel" aria-label="Path to scan">
<form method="post" action="" accept-charset="utf-8">
${hiddenFields()}
<label for="filepath">Path to scan</label>
<input id="filepath" name="filepath" type="text" class="pathinput" required maxlength="4096" value="${escapeHtml(model.value ?? "")}"
 placeholder="/mnt/media/Movies/Heat (1995)" autocapitalize="off" autocorrect="off" autocomplete="off"
 spellcheck="false" enterkeyhint="go" aria-describedby="filepath-hint"${model.result ? "" : " autofocus"}>
<p class="hint" id="filepath-hint">A file or a folder, in the media server's own form or in any form listed in <code>SERVER_PATH_MAPPINGS</code>.</p>
<p><label><input type="checkbox" name="refresh" value="1"> Refresh in place after the scan</label>
<span class="hint">for a file changed under the same name (a new subtitle, a transcode): its item is re-read once the server shows it.</span></p>
<button type="submit" class="primary big">Scan</button>
</form>
</section>
${model.connect ?? ""}
<footer class="foot">
${model.queueCount === undefined ? "" : `<p>${queueLine(model.queueCount)} <a href="${escapeHtml(`${model.shell.base}/queue`)}">See the queue</a></p>`}
<p>From a script:<code class="cmd">curl -d eventType=Manual \\
  --data-urlencode filepath=/path/to/folder \\
  &lt;this page's URL&gt;</code></p>
</footer>`;
  return renderConsolePage({ shell: model.shell, active: "scan", title: TITLE, lead: LEAD, body });
}

function hiddenFields(): string {
  return `<input type="hidden" name="eventType" value="Manual">
<input type="hidden" name="source" value="page">`;
}

function renderResult(result: PageResult): string {
  switch (result.kind) {
    case "queued":
      return result.preview ? renderQueuedWithPreview(result, result.preview) : renderQueued(result);
    case "held":
      return `<section class="flash warn" role="alert" id="result" aria-labelledby="result-title">
<h2 id="result-title">Not queued yet: this path would not be scanned as you expect</h2>
${renderPreviewProblems(result.preview)}
${renderPreviewFacts(result.preview)}
<form method="post" action="" accept-charset="utf-8" class="confirm">
${hiddenFields()}
<input type="hidden" name="filepath" value="${escapeHtml(result.sent)}">${result.refresh ? `\n<input type="hidden" name="refresh" value="${escapeHtml(result.refresh)}">` : ""}
<input type="hidden" name="confirm" value="1">
<button type="submit" class="danger" id="queue-anyway">Queue anyway</button>
<span class="small muted">or fix the path below and scan again.</span>
</form>
</section>`;
    case "ignored":
      return `<section class="flash warn" role="status" id="result">
<h2>Not queued</h2>
<p><code>${escapeHtml(result.path)}</code> was not queued because ${escapeHtml(result.reason)}.</p>
</section>`;
    case "refused":
      return `<section class="flash err" role="alert" id="result">
<h2>Not queued</h2>
<p>${escapeHtml(result.reason)}</p>
</section>`;
  }
}

type Queued = Extract<PageResult, { kind: "queued" }>;

/** Without the preview (a setup with no console sources): what the queue was given, as before. */
function renderQueued(result: Queued): string {
  return `<section class="flash ok" role="status" id="result">
<h2>${queuedTitle(result)}</h2>
<dl class="kv">
<dt>Folder to scan</dt><dd><code>${escapeHtml(result.folder)}</code></dd>
<dt>You sent</dt><dd><code>${escapeHtml(result.sent)}</code></dd>
<dt>Mapped from</dt><dd>${
    result.mappedFrom ? `<code>${escapeHtml(result.mappedFrom)}</code>` : "nothing: already in the server's form"
  }</dd>
${result.path === result.folder || result.path === result.sent ? "" : `<dt>Server path</dt><dd><code>${escapeHtml(result.path)}</code></dd>`}
</dl>
</section>`;
}

function renderQueuedWithPreview(result: Queued, preview: PathPreview): string {
  const anyway = preview.problems.length > 0;
  return `<section class="flash ${anyway ? "warn" : "ok"}" role="status" id="result">
<h2>${anyway ? "Queued anyway" : queuedTitle(result)}</h2>
${renderPreviewProblems(preview)}
${renderPreviewFacts(preview)}
</section>`;
}

function queuedTitle(result: Queued): string {
  return result.merged ? "Already queued: merged" : "Queued for scanning";
}

function queueLine(count: number): string {
  if (count === 0) return "The queue is empty.";
  return count === 1 ? "1 folder is waiting in the queue." : `${count} folders are waiting in the queue.`;
}

/** `GET /<SERVER_PASS>` while `SERVER_ALLOW_MANUAL_SCAN` is false (403). */
export function renderManualPageDisabled(shell: ConsoleShell, connect = ""): string {
  return renderConsolePage({
    shell,
    active: "scan",
    title: "Manual scan page is off",
    body: `<section class="flash warn" role="status">
<h2>This page is turned off</h2>
<p>To use it, set <code>"SERVER_ALLOW_MANUAL_SCAN": true</code> in <code>config.json</code> and have autoscan read
its config again, no restart needed: <code>docker kill -s HUP autoscan</code> in Docker,
<code>sudo systemctl reload autoscan</code> with systemd, <code>kill -HUP &lt;pid&gt;</code> elsewhere. Then open
this page again.</p>
<p>Set as <code>SERVER_ALLOW_MANUAL_SCAN</code> in the environment instead (it wins over the file)? A running process
keeps its environment: change it in <code>.env</code> or the compose file and recreate the container with
<code>docker compose up -d</code>.</p>
</section>
<p>Webhooks and scripts are not affected: posting <code>eventType=Manual&amp;filepath=…</code> to this URL works either way.</p>
${connect}`,
  });
}
