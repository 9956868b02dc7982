import { escapeHtml } from "../../core/escape-html.ts";
import { pathHtml } from "./format.ts";
import type { PathPreview } from "./sources.ts";

/**
 * The path preview as HTML (the Scan page's result, the Libraries page's preview form): which form matched, the
 * server's path, the Plex library, what autoscan sees on disk, the folder to scan, and each problem with its fix.
 * Every value is escaped; paths keep left-to-right order whatever their letters.
 */
export function renderPreviewFacts(preview: PathPreview): string {
  return `<dl class="kv">
<dt>You sent</dt><dd>${pathHtml(preview.input)}</dd>
<dt>Matched form</dt><dd>${matchedForm(preview)}</dd>
<dt>Server path</dt><dd>${pathHtml(preview.serverPath)}</dd>
<dt>Plex library</dt><dd>${libraries(preview)}</dd>
<dt>On disk</dt><dd>${onDisk(preview)}</dd>
<dt>Folder to scan</dt><dd>${pathHtml(preview.scanFolder)}${scanFolderNote(preview)}</dd>
</dl>`;
}

/** The problems, each with its fix; nothing when there are none. */
export function renderPreviewProblems(preview: PathPreview): string {
  if (preview.problems.length === 0) return "";
  const items = preview.problems
    .map((problem) => `<li><p>${escapeHtml(problem.reason)}</p><p class="small"><b>Fix:</b> ${richText(problem.fix)}</p></li>`)
    .join("\n");
  return `<ul class="problems">\n${items}\n</ul>`;
}

/** A whole preview panel (the Libraries page). `id` names the region. */
export function renderPreviewPanel(preview: PathPreview, id = "preview"): string {
  const ok = preview.problems.length === 0;
  const status = ok
    ? '<span class="badge ok">Would be scanned</span>'
    : `<span class="badge err">${preview.problems.length === 1 ? "1 problem" : `${preview.problems.length} problems`}</span>`;
  return `<section class="panel" id="${escapeHtml(id)}" aria-labelledby="${escapeHtml(id)}-title">
<h2 id="${escapeHtml(id)}-title">Preview ${status}</h2>
${renderPreviewProblems(preview)}
${renderPreviewFacts(preview)}
</section>`;
}

function matchedForm(preview: PathPreview): string {
  if (preview.matchedForm !== undefined) return pathHtml(preview.matchedForm);
  if (preview.mapped) return '<span class="muted">none needed: already in the server\'s form</span>';
  return '<span class="badge muted">none</span>';
}

function libraries(preview: PathPreview): string {
  if (preview.sections === undefined) {
    return `<span class="badge warn">unknown</span> <span class="small">${escapeHtml(preview.sectionsError ?? "Plex could not be asked")}</span>`;
  }
  if (preview.sections.length === 0) return '<span class="badge err">none</span>';
  return preview.sections
    .map((section) => `${escapeHtml(section.title)} <span class="muted small">(id ${escapeHtml(section.id)})</span>`)
    .join(", ");
}

function onDisk(preview: PathPreview): string {
  const where = preview.localPath !== undefined ? ` <span class="small muted">at</span> ${pathHtml(preview.localPath)}` : "";
  switch (preview.onDisk) {
    case "file":
      return `<span class="badge ok">file</span>${where}`;
    case "folder":
      return `<span class="badge ok">folder</span>${where}`;
    case "missing": {
      const others = (preview.lookedAt ?? []).filter((path) => path !== preview.localPath);
      const also = others.length === 0 ? "" : `<br><span class="small muted">also looked at</span> ${others.map((path) => pathHtml(path)).join(", ")}`;
      return `<span class="badge warn">missing</span>${where} <span class="small muted">(it may not have arrived yet)</span>${also}`;
    }
    case "not checkable":
      return `<span class="badge muted">not checkable</span>${where}`;
  }
}

function scanFolderNote(preview: PathPreview): string {
  if (preview.onDisk === "file" || preview.onDisk === "folder") return "";
  return '<br><span class="small muted">Not found on disk, so it is scanned as given; if it turns out to be a file, its folder is scanned.</span>';
}

/** Plain text with `code` between backticks: escaped, the backticked parts as `<code>`. */
export function richText(text: string): string {
  return text
    .split("`")
    .map((part, index) => (index % 2 === 1 ? `<code>${escapeHtml(part)}</code>` : escapeHtml(part)))
    .join("");
}
