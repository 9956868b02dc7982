import { escapeHtml } from "../../core/escape-html.ts";
import { duration, plural, timeTag } from "./format.ts";
import type { WatcherView } from "./sources.ts";

/**
 * The Queue page's "Watched folders" panel (`WATCH`): per watcher, its mode and paths, whether it watches, waits for a
 * mount or stopped (and why), when it last reported a change, its last walk and how long it took, what it knows.
 */
const STATES: Readonly<Record<WatcherView["state"], { badge: string; label: string }>> = {
  starting: { badge: "muted", label: "first walk" },
  watching: { badge: "ok", label: "watching" },
  waiting: { badge: "warn", label: "waiting for a mount" },
  stopped: { badge: "err", label: "stopped" },
};

export function watchPanel(watchers: readonly WatcherView[], now: number): string {
  const rows = watchers
    .map((w) => {
      const state = STATES[w.state];
      const how = w.mode === "events" ? "change notifications" : `a walk every ${duration(w.pollMs ?? 0, true)}`;
      const facts = [
        `${plural(w.files, "file")} in ${plural(w.folders, "folder")}`,
        w.settling > 0 ? `${plural(w.settling, "file")} settling` : "",
        w.lastEventAt === undefined ? "no change reported yet" : `last change ${timeTag(w.lastEventAt, now)}`,
        w.lastWalkAt === undefined ? "" : `walked ${timeTag(w.lastWalkAt, now)} in ${escapeHtml(duration(w.lastWalkMs ?? 0))}`,
      ].filter(Boolean);
      const why =
        w.state === "stopped" && w.problem
          ? `<p class="reason">${escapeHtml(w.problem)}</p>`
          : w.state === "waiting" && w.waitingFor
            ? `<p class="reason">'${escapeHtml(w.waitingFor)}' does not answer; the walk goes on when it does. Webhooks are not held.</p>`
            : "";
      const paths = w.paths.map((path) => `<code>${escapeHtml(path)}</code>`).join(", ");
      return `<li><b>${escapeHtml(w.name)}</b> <span class="badge ${state.badge}">${state.label}</span> <span class="small muted">${how}</span>
<div class="small">${paths}</div><div class="small muted">${facts.join(" · ")}</div>${why}</li>`;
    })
    .join("");
  return `<section class="panel" id="watch" data-live aria-labelledby="watch-title">
<h2 id="watch-title">Watched folders</h2>
<p class="hint">Files no *arr app announced (copied by hand, transcoded, subtitles) are scanned once they stop changing.</p>
<ul class="requests watchers">${rows}</ul>
</section>`;
}
