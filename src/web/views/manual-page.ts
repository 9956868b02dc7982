import { escapeHtml } from "./escape.ts";
import { renderLayout } from "./layout.ts";

/**
 * The manual scan page (`GET /<SERVER_PASS>`): one path, one button, and after a submit what happened to it: which
 * folder will be scanned, in which form the path was understood, or why nothing was queued. Works without JavaScript
 * (a plain form post to the same URL).
 */
export type PageResult =
  | {
      readonly kind: "queued";
      readonly sent: string;
      readonly path: string;
      readonly folder: string;
      readonly merged: boolean;
      readonly mappedFrom?: string;
    }
  /** `reason` completes "… was not queued because …". */
  | { readonly kind: "ignored"; readonly path: string; readonly reason: string }
  | { readonly kind: "refused"; readonly reason: string };

export interface ManualPageModel {
  readonly result?: PageResult;
  /** What the input shows: the last path sent, so that a typo can be fixed instead of retyped. */
  readonly value?: string;
  readonly queueCount?: number;
}

export function renderManualPage(model: ManualPageModel): string {
  const body = `${model.result ? renderResult(model.result) : ""}
<form method="post" action="" accept-charset="utf-8">
<input type="hidden" name="eventType" value="Manual">
<input type="hidden" name="source" value="page">
<label for="filepath">Path to scan</label>
<input id="filepath" name="filepath" type="text" required maxlength="4096" value="${escapeHtml(model.value ?? "")}"
 placeholder="/mnt/media/Movies/Heat (1995)" autocapitalize="off" autocorrect="off" autocomplete="off"
 spellcheck="false" enterkeyhint="go"${model.result ? "" : " autofocus"}>
<p class="hint">A file or a folder, in the media server's own form or in any form listed in <code>SERVER_PATH_MAPPINGS</code>.</p>
<button type="submit">Scan</button>
</form>
<footer>
${model.queueCount === undefined ? "" : `<p>${queueLine(model.queueCount)}</p>`}
<p>From a script:<code class="cmd">curl -d eventType=Manual \\
  --data-urlencode filepath=/path/to/folder \\
  &lt;this page's URL&gt;</code></p>
</footer>`;
  return renderLayout("Manual scan", body);
}

function renderResult(result: PageResult): string {
  switch (result.kind) {
    case "queued":
      return `<section class="result ok" role="status" id="result">
<h2>${result.merged ? "Already queued: merged" : "Queued for scanning"}</h2>
<dl>
<dt>Folder to scan</dt><dd><code>${escapeHtml(result.folder)}</code></dd>
<dt>You sent</dt><dd><code>${escapeHtml(result.sent)}</code></dd>
<dt>Mapped from</dt><dd>${
        result.mappedFrom
          ? `<code>${escapeHtml(result.mappedFrom)}</code>`
          : "nothing: already in the server's form"
      }</dd>
${result.path === result.folder || result.path === result.sent ? "" : `<dt>Server path</dt><dd><code>${escapeHtml(result.path)}</code></dd>`}
</dl>
</section>`;
    case "ignored":
      return `<section class="result warn" role="status" id="result">
<h2>Not queued</h2>
<p><code>${escapeHtml(result.path)}</code> was not queued because ${escapeHtml(result.reason)}.</p>
</section>`;
    case "refused":
      return `<section class="result err" role="alert" id="result">
<h2>Not queued</h2>
<p>${escapeHtml(result.reason)}</p>
</section>`;
  }
}

function queueLine(count: number): string {
  if (count === 0) return "The queue is empty.";
  return count === 1 ? "1 folder is waiting in the queue." : `${count} folders are waiting in the queue.`;
}

/** `GET /<SERVER_PASS>` while `SERVER_ALLOW_MANUAL_SCAN` is false (403). */
export function renderManualPageDisabled(): string {
  return renderLayout(
    "Manual scan page is off",
    `<section class="result warn" role="status">
<h2>This page is turned off</h2>
<p>To use it, set <code>"SERVER_ALLOW_MANUAL_SCAN": true</code> in <code>config.json</code>
(or <code>SERVER_ALLOW_MANUAL_SCAN=true</code> in the environment) and restart autoscan.</p>
</section>
<p>Webhooks and scripts are not affected: posting <code>eventType=Manual&amp;filepath=…</code> to this URL works either way.</p>`,
  );
}
