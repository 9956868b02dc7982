import { escapeHtml } from "../../core/escape-html.ts";
import { messageHtml, timeTag } from "./format.ts";
import type { BackfillAppStatus } from "../../core/backfill-status.ts";

/**
 * The Queue page's "Catching up" panel (`ARR`): per *arr app, whether its history could be read, when, what it
 * brought that no webhook did, and when it could not be read, why (its cursor waits there until it can).
 */
const STATES: Readonly<Record<BackfillAppStatus["state"], { badge: string; label: string }>> = {
  waiting: { badge: "muted", label: "not read yet" },
  standby: { badge: "muted", label: "standby" },
  ok: { badge: "ok", label: "read" },
  down: { badge: "warn", label: "not answering" },
  auth: { badge: "err", label: "key refused" },
  api: { badge: "err", label: "not understood" },
  other: { badge: "err", label: "failed" },
};

export function backfillPanel(apps: readonly BackfillAppStatus[], now: number): string {
  const rows = apps
    .map((app) => {
      const state = STATES[app.state];
      const read = app.lastRead
        ? `last read ${timeTag(app.lastRead.at, now)}: ${app.lastRead.queued} queued that no webhook brought`
        : app.state === "standby"
          ? `${app.activeInstance ? `instance ${escapeHtml(app.activeInstance)}` : "another instance"} reads its history; this one takes over if it stops`
          : "";
      const problem = app.problem
        ? `<p class="reason"><b>Since ${timeTag(app.problem.since, now)}:</b> ${messageHtml(app.problem.message)}</p>`
        : "";
      return `<li><b>${escapeHtml(app.name)}</b> <span class="badge ${state.badge}">${state.label}</span> <span class="small muted">${read}</span>${problem}</li>`;
    })
    .join("");
  return `<section class="panel" id="backfill" data-live aria-labelledby="backfill-title">
<h2 id="backfill-title">Catching up from the *arr apps</h2>
<p class="hint">Each app's history is read back for imports, renames and deletes whose webhook never arrived; what the queue already has is left out.</p>
<ul class="requests backfill">${rows}</ul>
</section>`;
}
