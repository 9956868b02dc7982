import { escapeHtml } from "../../core/escape-html.ts";
import { CONSOLE_STYLE } from "./style.ts";

/**
 * The shell of every console page: one navigation bar (Scan, Queue, History, Libraries, and Drive when monitoring is
 * on), the live-update indicator, the page's title and body. The links carry the URL secret (every page lives under
 * it); the `Referrer-Policy` header keeps it out of other sites' logs.
 */
export type ConsolePageId = "scan" | "queue" | "history" | "libraries" | "drive";

export interface ConsoleShell {
  /** `/<SERVER_PASS>`, URL-encoded: the root of every link. */
  readonly base: string;
  /** Whether the Drive page exists (`CLOUD.ENABLED`). */
  readonly drive: boolean;
  /** The token every form posts back (see `console/csrf.ts`). */
  readonly csrf: string;
  /** Whether live updates exist here (the queue's change feed was given). */
  readonly live?: boolean;
}

export interface ConsolePageModel {
  readonly shell: ConsoleShell;
  readonly active: ConsolePageId;
  readonly title: string;
  /** One plain sentence under the title. */
  readonly lead?: string;
  /** The page's HTML (every value in it escaped by its view). */
  readonly body: string;
  /** Whether the page follows the queue's changes live (Server-Sent Events). */
  readonly live?: boolean;
}

const PAGES: readonly { id: ConsolePageId; label: string; path: string }[] = [
  { id: "scan", label: "Scan", path: "" },
  { id: "queue", label: "Queue", path: "/queue" },
  { id: "history", label: "History", path: "/history" },
  { id: "libraries", label: "Libraries", path: "/libraries" },
  { id: "drive", label: "Drive", path: "/drive" },
];

export function consolePath(shell: ConsoleShell, page: ConsolePageId): string {
  return `${shell.base}${PAGES.find((p) => p.id === page)?.path ?? ""}`;
}

export function renderConsolePage(model: ConsolePageModel): string {
  const { shell } = model;
  const links = PAGES.filter((p) => p.id !== "drive" || shell.drive)
    .map((p) => {
      const current = p.id === model.active ? ' aria-current="page"' : "";
      return `<li><a href="${escapeHtml(shell.base + p.path)}"${current}>${p.label}</a></li>`;
    })
    .join("");
  const live = model.live && shell.live
    ? `<span class="live" id="live" role="status" aria-live="polite" data-events="${escapeHtml(`${shell.base}/events`)}">Live updates off</span>`
    : "";
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta name="referrer" content="no-referrer">
<meta name="robots" content="noindex, nofollow">
<link rel="icon" href="data:,">
<meta name="csrf-token" content="${escapeHtml(shell.csrf)}">
<title>${escapeHtml(model.title)} · autoscan</title>
<style>${CONSOLE_STYLE}</style>
<script src="${escapeHtml(shell.base)}/console.js" defer></script>
</head>
<body>
<a class="skip" href="#content">Skip to content</a>
<header class="top"><div class="bar">
<span class="brand">autoscan</span>
<nav aria-label="Console" class="navwrap"><ul class="nav">${links}</ul></nav>
${live}
</div></header>
<main id="content" class="wrap">
<h1>${escapeHtml(model.title)}</h1>
${model.lead ? `<p class="lead">${escapeHtml(model.lead)}</p>` : ""}
${model.body}
</main>
</body>
</html>
`;
}

/** A hidden field with the form token; every console form that changes something carries it. */
export function csrfField(shell: ConsoleShell): string {
  return `<input type="hidden" name="token" value="${escapeHtml(shell.csrf)}">`;
}
