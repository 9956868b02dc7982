import { escapeHtml } from "../../core/escape-html.ts";
import { plural } from "./format.ts";
import { csrfField, type ConsoleShell } from "./layout.ts";

/**
 * The offer after SERVER_PATH_MAPPINGS changed (a reload, or a restart on an edited config): requests refused for lack
 * of a mapping that the mappings now reach are counted, and one button retries them all (they wait under the mapped
 * folder; those still unmapped stay in History). Shown on the Queue and History pages while there are any.
 */
export function remapOfferHtml(shell: ConsoleShell, self: string, count: number | undefined): string {
  if (!count) return "";
  const what = plural(count, "request");
  return `<section class="flash warn" role="status" aria-labelledby="remap-title">
<h2 id="remap-title">SERVER_PATH_MAPPINGS now reach ${escapeHtml(what)} refused for lack of a mapping</h2>
<p>They are in History as failed ("Not queued: …"). Retried, each waits under its mapped folder and is scanned after the scan delay.</p>
<form class="inline" method="post" action="${escapeHtml(`${shell.base}/history/retry-unmapped`)}" data-action>
${csrfField(shell)}<input type="hidden" name="back" value="${escapeHtml(self)}">
<button type="submit" class="primary" data-focus="retry-unmapped">Retry the ${escapeHtml(count === 1 ? "unmapped request" : `${count.toLocaleString("en-US")} unmapped requests`)}</button></form>
</section>`;
}
