import { notFound, type Handler } from "../responses.ts";
import { escapeHtml } from "../../core/escape-html.ts";
import { consoleHtml, type ConsoleDeps } from "./console-deps.ts";
import { duration, plural, timeTag, messageHtml } from "./format.ts";
import { renderConsolePage, type ConsoleShell } from "./layout.ts";
import type { DriveStatus } from "../../core/drive-status.ts";

/**
 * The Drive page (`GET /<SERVER_PASS>/drive`, only when `CLOUD.ENABLED`): whether the monitor works, how it reaches
 * Google, when it last polled and what came of it, today's changes and scans, and its last errors. Everything comes
 * from the monitor's memory (`DriveStatus`): opening the page asks Google nothing. The status region follows the
 * queue's changes live, so a scan the monitor queues shows up without a reload.
 */
export function createDrivePageHandler(deps: ConsoleDeps): Handler {
  return (c) => {
    const drive = deps.sources.drive;
    if (!drive) return notFound(c);
    return consoleHtml(c, renderDrivePage(deps.shell, drive(), deps.now()));
  };
}

export function renderDrivePage(shell: ConsoleShell, status: DriveStatus, now: number): string {
  const body = `<div id="drive-status" data-live>
${statePanel(status, now)}
${errorsPanel(status, now)}
</div>`;
  return renderConsolePage({
    shell,
    active: "drive",
    title: "Google Drive",
    lead: "New files in Google Drive, seen in its change feed, become scans here.",
    body,
    live: true,
  });
}

interface Verdict {
  readonly badge: "ok" | "err" | "warn" | "info" | "muted";
  readonly label: string;
  /** HTML: one sentence. */
  readonly sentence: string;
}

function verdictOf(status: DriveStatus, now: number): Verdict {
  const next = status.nextPollAt !== undefined ? ` The next poll is ${timeTag(status.nextPollAt, now)}.` : "";
  switch (status.state) {
    case "failed":
      return { badge: "err", label: "Stopped", sentence: "Monitoring stopped, and only a change by you can start it again." };
    case "stopped":
      return { badge: "muted", label: "Stopped", sentence: "Monitoring was stopped (autoscan is shutting down)." };
    case "idle":
      return { badge: "muted", label: "Not started", sentence: "Monitoring starts once the server is ready." };
    case "standby": {
      // Several instances share the database (SERVER_DATABASE_URL): one polls, the others stand by.
      const who = status.activeInstance ? `Instance <b>${escapeHtml(status.activeInstance)}</b>` : "Another autoscan instance";
      return {
        badge: "info",
        label: "Standby",
        sentence: `${who} polls Google Drive; this instance takes over if it stops.`,
      };
    }
  }
  if (status.lastPoll && !status.lastPoll.ok) {
    const failures = status.failuresInARow ?? 1;
    const what = failures > 1 ? `The last ${failures} polls failed` : "The last poll failed";
    return {
      badge: "err",
      label: "Failing",
      sentence: `${what}; autoscan keeps trying, waiting longer after each failure.${next}`,
    };
  }
  if (!status.lastPoll) return { badge: "info", label: "Starting", sentence: "Connecting to Google Drive…" };
  return { badge: "ok", label: "Running", sentence: `The change feed is read every ${escapeHtml(duration(status.pollIntervalMs, true))}; the last poll went well.` };
}

function statePanel(status: DriveStatus, now: number): string {
  const verdict = verdictOf(status, now);
  const stopped =
    status.state === "failed"
      ? problem("Why it stopped", status.reason ?? "See the log. Fix the cause, then restart autoscan.")
      : "";
  const failing = verdict.label === "Failing" && status.lastPoll?.detail ? problem("Last error", status.lastPoll.detail) : "";
  const rows: [string, string][] = [["Access", escapeHtml(status.access)]];
  if (status.account) rows.push(["Credentials", escapeHtml(status.account)]);
  const inUse = status.state !== "failed" && status.state !== "stopped" && status.state !== "standby";
  rows.push(["Access token", inUse ? tokenText(status.tokenExpiresAt, now) : `<span class="muted">not in use while ${status.state === "standby" ? "another instance polls" : "monitoring is stopped"}</span>`]);
  rows.push([status.drives.length === 1 ? "Drive" : "Drives", drivesText(status.drives)]);
  rows.push(["Poll interval", escapeHtml(duration(status.pollIntervalMs, true))]);
  rows.push(["Last poll", lastPollText(status, now)]);
  if (status.nextPollAt !== undefined) rows.push(["Next poll", timeTag(status.nextPollAt, now)]);
  const kv = rows.map(([key, value]) => `<dt>${key}</dt><dd>${value}</dd>`).join("\n");
  const lastScan = status.lastScanQueuedAt !== undefined ? `<li>Last scan queued <b>${timeTag(status.lastScanQueuedAt, now)}</b></li>` : "";
  return `<section class="panel" aria-labelledby="drive-state">
<h2 id="drive-state">Monitoring <span class="badge ${verdict.badge}">${escapeHtml(verdict.label)}</span></h2>
<p>${verdict.sentence}</p>
${stopped}${failing}
<ul class="stats">
<li>Changes seen today <b class="num">${status.today.changes.toLocaleString("en-US")}</b></li>
<li>Scans queued today <b class="num">${status.today.scansQueued.toLocaleString("en-US")}</b></li>
${lastScan}
</ul>
<dl class="kv wrapany">
${kv}
</dl>
<p class="hint">"Today" is the UTC day; the counts start again at midnight UTC and when autoscan restarts.</p>
</section>`;
}

/** A problem box: what went wrong, in the words of the error (it names the fix where one is known). */
function problem(title: string, message: string): string {
  return `<section class="flash err wrapany" role="alert"><h3>${escapeHtml(title)}</h3><p>${messageHtml(message)}</p></section>`;
}

function tokenText(expiresAt: number | undefined, now: number): string {
  if (expiresAt === undefined) return `<span class="muted">not fetched yet</span>`;
  if (expiresAt <= now) return `expired ${timeTag(expiresAt, now)}; a new one is fetched at the next poll`;
  return `expires ${timeTag(expiresAt, now)} <span class="muted small">(renewed automatically)</span>`;
}

function drivesText(drives: readonly string[]): string {
  if (drives.length === 0) return `<span class="muted">none: check CLOUD.TEAMDRIVES</span>`;
  return drives.map((name) => escapeHtml(name)).join(", ");
}

function lastPollText(status: DriveStatus, now: number): string {
  const poll = status.lastPoll;
  if (!poll) return `<span class="muted">none yet</span>`;
  // Stopped before any poll went through (credentials refused at start): the box above says why.
  if (!poll.ok && status.state === "failed" && status.today.changes === 0 && status.lastScanQueuedAt === undefined) {
    return `<span class="muted">none went through</span>`;
  }
  const badge = poll.ok ? `<span class="badge ok">ok</span>` : `<span class="badge err">failed</span>`;
  // A failed poll's detail is the error, shown above and in the list below.
  const detail = poll.ok && poll.detail ? `: ${escapeHtml(poll.detail)}` : "";
  return `${timeTag(poll.at, now)} ${badge}${detail}`;
}

function errorsPanel(status: DriveStatus, now: number): string {
  const title = `<h2 id="drive-errors">Recent errors</h2>`;
  if (status.errors.length === 0) {
    return `<section class="panel" aria-labelledby="drive-errors">${title}<p class="empty">No errors since autoscan started.</p></section>`;
  }
  // Every error, the one that stopped monitoring included: the box above says why it stopped, this list says when.
  const rows = status.errors
    .map((error) => `<tr><td data-label="When" class="when">${timeTag(error.at, now)}</td><td data-label="Error" class="wrapany">${messageHtml(error.message)}</td></tr>`)
    .join("\n");
  const which = status.errors.length === 1 ? "The last error; the log has it in full." : `The last ${plural(status.errors.length, "error")}, newest first; the log has each in full.`;
  return `<section class="panel" aria-labelledby="drive-errors">${title}
<p class="hint">${which}</p>
<table class="stack">
<thead><tr><th scope="col">When</th><th scope="col">Error</th></tr></thead>
<tbody>
${rows}
</tbody>
</table>
</section>`;
}
