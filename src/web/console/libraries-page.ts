import type { Context } from "hono";
import { describeError } from "../../core/errors.ts";
import { escapeHtml } from "../../core/escape-html.ts";
import { consoleHtml, type ConsoleDeps } from "./console-deps.ts";
import { pathHtml, plural } from "./format.ts";
import { consolePath, renderConsolePage, type ConsoleShell } from "./layout.ts";
import { renderPreviewPanel, richText } from "./preview-view.ts";
import type { LibrariesReport, LibrarySection, MappingView, PathPreview, ScanRouteNote } from "./sources.ts";

/**
 * `GET /<SERVER_PASS>/libraries`: Plex's sections and their folders beside `SERVER_PATH_MAPPINGS`, with what does
 * not meet flagged (a section folder no mapping reaches, a mapping whose server form lies in no section), and the path
 * preview for any path (`?path=`). Plex unreachable → the mappings still show, with why the sections do not.
 */
export interface LibrariesPageModel {
  readonly shell: ConsoleShell;
  /** Absent when the service gives no libraries capability. */
  readonly report?: LibrariesReport;
  /** The `?path=` asked for, and its preview (absent when none was asked or the preview is not available). */
  readonly path?: string;
  readonly preview?: PathPreview;
  readonly previewError?: string;
  /** Whether the preview exists in this setup (the form is shown only then). */
  readonly canPreview: boolean;
  /** Jellyfin and Emby targets: how each scans (absent or empty: none configured). */
  readonly scanRoutes?: readonly ScanRouteNote[];
}

export function renderLibrariesPage(model: LibrariesPageModel): string {
  const body = [
    renderPreviewForm(model),
    model.preview ? renderPreviewPanel(model.preview) : "",
    model.previewError ? `<div class="flash err" role="alert"><p>${escapeHtml(model.previewError)}</p></div>` : "",
    renderSections(model.report),
    renderMappings(model.report),
    renderScanRoutes(model.scanRoutes ?? []),
  ].join("\n");
  return renderConsolePage({
    shell: model.shell,
    active: "libraries",
    title: "Libraries",
    lead: "Plex's libraries beside SERVER_PATH_MAPPINGS: what autoscan sends where, and what nothing reaches.",
    body,
  });
}

function renderPreviewForm(model: LibrariesPageModel): string {
  if (!model.canPreview) return "";
  return `<section class="panel" aria-labelledby="preview-form-title">
<h2 id="preview-form-title">Where would a path go?</h2>
<form method="get" action="${escapeHtml(consolePath(model.shell, "libraries"))}" accept-charset="utf-8" class="filters">
<div class="field grow"><label for="path">Path</label>
<input id="path" name="path" type="text" class="pathinput" maxlength="4096" value="${escapeHtml(model.path ?? "")}"
 placeholder="/mnt/media/Movies/Heat (1995)" autocapitalize="off" autocorrect="off" autocomplete="off" spellcheck="false"></div>
<button type="submit" class="primary">Preview</button>
</form>
<p class="hint">Nothing is queued: this only shows which mapping, library and folder the path would get.</p>
</section>`;
}

function renderSections(report: LibrariesReport | undefined): string {
  if (!report) {
    return `<section class="panel"><h2>Plex libraries</h2><p class="muted">The libraries are not available in this setup.</p></section>`;
  }
  if (report.sections === undefined) {
    return `<section class="panel" id="sections" aria-labelledby="sections-title">
<h2 id="sections-title">Plex libraries</h2>
<div class="flash warn" role="status"><h2>Plex's libraries could not be listed</h2>
<p>${escapeHtml(report.error ?? "Plex did not answer.")}</p>
<p class="small">The mappings below are shown without their libraries. <code>autoscan sections</code> lists them once Plex answers.</p></div>
</section>`;
  }
  const noMappings = report.mappings.length === 0;
  const locations = report.sections.flatMap((s) => s.locations);
  const unreached = locations.filter((l) => !l.reached && !l.sentAsIs).length;
  const asSent = locations.filter((l) => !l.reached && l.sentAsIs).length;
  const summary = noMappings
    ? `<p class="hint">SERVER_PATH_MAPPINGS is empty: autoscan sends every path as it receives it, so every folder below is reached only if the *arr apps see it under the same path as Plex.</p>`
    : unreached === 0
      ? `<p class="hint">Every library folder is reached${asSent > 0 ? ": by a mapping, or by the paths the apps send as they are" : " by a mapping"}.</p>`
      : `<p class="hint">${escapeHtml(plural(unreached, "library folder"))} no mapping reaches, nor an *arr app's root folder or a recent request (flagged below).</p>`;
  const list =
    report.sections.length === 0
      ? '<p class="empty">Plex has no libraries.</p>'
      : `<ul class="items">\n${report.sections.map((s) => renderSection(s, noMappings)).join("\n")}\n</ul>`;
  return `<section class="panel" id="sections" aria-labelledby="sections-title">
<h2 id="sections-title">Plex libraries</h2>
${summary}
${list}
</section>`;
}

function renderSection(section: LibrarySection, noMappings: boolean): string {
  const folders = section.locations
    .map((location) => {
      const flagged = !noMappings && !location.reached && !location.sentAsIs;
      const badge = location.sentAsIs
        ? ' <span class="badge ok" title="An *arr app\'s root folder or recent requests lie here as they are sent: the apps use Plex\'s own paths">reached as sent</span>'
        : noMappings
          ? ""
          : flagged
            ? ' <span class="badge warn">no mapping reaches it</span>'
            : ' <span class="badge ok">mapped</span>';
      const fix = flagged
        ? `<p class="small muted">${richText(
            "If the *arr apps see this folder under another path, add that path to `SERVER_PATH_MAPPINGS` under this folder. " +
              "If they send Plex's own paths here, nothing is missing: it shows as reached once a request for it came (or at once, with the apps under `ARR`).",
          )}</p>`
        : "";
      return `<li>${pathHtml(location.path)}${badge}${fix}</li>`;
    })
    .join("\n");
  return `<li class="item"><div>
<h3>${escapeHtml(section.title)} <span class="muted small">id ${escapeHtml(section.id)} · ${escapeHtml(section.type)}</span></h3>
${section.locations.length === 0 ? '<p class="small muted">No folders listed.</p>' : `<ul class="requests">\n${folders}\n</ul>`}
</div></li>`;
}

/** Jellyfin and Emby: through the TargetedScan plugin (seconds) or the server's monitor (its delay first), and why. */
function renderScanRoutes(routes: readonly ScanRouteNote[]): string {
  if (routes.length === 0) return "";
  const rows = routes
    .map((note) => {
      const badge = note.route === "plugin" ? '<span class="badge ok">TargetedScan: seconds</span>' : '<span class="badge warn">Media/Updated: after the server\'s delay</span>';
      return `<li>${escapeHtml(note.target)} ${badge}<p class="small muted">${escapeHtml(note.words)}.</p></li>`;
    })
    .join("\n");
  return `<section class="panel" id="scan-routes" aria-labelledby="scan-routes-title">
<h2 id="scan-routes-title">How Jellyfin and Emby scan</h2>
<ul class="requests">
${rows}
</ul>
</section>`;
}

function renderMappings(report: LibrariesReport | undefined): string {
  const mappings = report?.mappings ?? [];
  if (mappings.length === 0) {
    return `<section class="panel" id="mappings" aria-labelledby="mappings-title">
<h2 id="mappings-title">SERVER_PATH_MAPPINGS</h2>
<p class="muted">No mappings: paths go to Plex exactly as they arrive. Add <code>SERVER_PATH_MAPPINGS</code> in <code>config.json</code> when the *arr apps or Google Drive see your media under other paths than Plex.</p>
</section>`;
  }
  const sectionsKnown = report?.sections !== undefined;
  const titles = new Map((report?.sections ?? []).map((s) => [s.id, s.title]));
  const rows = mappings.map((m) => renderMapping(m, sectionsKnown, titles)).join("\n");
  return `<section class="panel" id="mappings" aria-labelledby="mappings-title">
<h2 id="mappings-title">SERVER_PATH_MAPPINGS</h2>
<table class="stack mappings">
<thead><tr><th scope="col">Plex's form</th><th scope="col">Other forms of it</th><th scope="col">Library</th></tr></thead>
<tbody>
${rows}
</tbody>
</table>
</section>`;
}

function renderMapping(mapping: MappingView, sectionsKnown: boolean, titles: ReadonlyMap<string, string>): string {
  const forms = mapping.forms.length === 0 ? '<span class="muted">none</span>' : mapping.forms.map((f) => pathHtml(f)).join("<br>");
  let library: string;
  if (!sectionsKnown) library = '<span class="badge muted">unknown</span>';
  else if (mapping.sections.length === 0) {
    library = `<span class="badge err">in no library</span><p class="small muted">${richText(
      "Plex has no library folder at or under this path: correct the key to the folder Plex uses (see `autoscan sections`), or add the folder to a library in Plex.",
    )}</p>`;
  } else library = mapping.sections.map((id) => `${escapeHtml(titles.get(id) ?? id)} <span class="muted small">(id ${escapeHtml(id)})</span>`).join(", ");
  return `<tr><td data-label="Plex's form">${pathHtml(mapping.serverForm)}</td><td data-label="Other forms">${forms}</td><td data-label="Library">${library}</td></tr>`;
}

/**
 * The folders of the newest requests, waiting and finished (server form): the evidence that the apps reach a library
 * folder with the paths they send. A queue that cannot be read gives none (the page then judges by the mappings alone).
 */
async function recentFolders(deps: ConsoleDeps, signal: AbortSignal): Promise<readonly string[]> {
  if (signal.aborted) return [];
  try {
    const [pending, history] = await Promise.all([deps.options.queue.listPending({ limit: RECENT }), deps.options.queue.listHistory({ limit: RECENT })]);
    return [...new Set([...pending.items, ...history.items].map((item) => item.folder))];
  } catch {
    return [];
  }
}

/** How many of the newest waiting and of the newest finished folders the Libraries page looks at. */
const RECENT = 500;

/** The page's handler: reads the report and the asked preview side by side. */
export function createLibrariesPageHandler(deps: ConsoleDeps) {
  return async (c: Context): Promise<Response> => {
    const { preview, libraries } = deps.sources;
    const path = c.req.query("path")?.trim() || undefined;
    const signal = c.req.raw.signal;
    const [report, asked] = await Promise.all([
      libraries ? recentFolders(deps, signal).then((recent) => libraries(signal, recent)).catch((error: unknown) => ({ error: describeError(error), mappings: [] })) : undefined,
      path !== undefined && preview ? preview(path.slice(0, 4096), signal).then(
        (value) => ({ value }),
        (error: unknown) => ({ error: `The preview failed: ${describeError(error)}` }),
      ) : undefined,
    ]);
    const page = renderLibrariesPage({
      shell: deps.shell,
      ...(report ? { report } : {}),
      ...(path !== undefined ? { path } : {}),
      ...(asked && "value" in asked ? { preview: asked.value } : {}),
      ...(asked && "error" in asked ? { previewError: asked.error } : {}),
      canPreview: preview !== undefined,
      ...(deps.sources.scanRoutes ? { scanRoutes: deps.sources.scanRoutes() } : {}),
    });
    return consoleHtml(c, page);
  };
}
