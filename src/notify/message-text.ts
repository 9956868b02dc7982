import type { NotifyEvent, NotifyEventName } from "../core/notify-event.ts";
import type { Batch } from "./batch.ts";

/**
 * A batch in words, for the formats people read (Discord, ntfy, apprise): a title that says what happened ("20 folders
 * failed", "plex stopped answering"), one line per event, and how bad it is. Each format fits the lines into its own
 * limit with `fitLines`, which ends with "… and N more" when they do not all fit.
 */
export type Severity = "failure" | "warning" | "info" | "success";

export interface MessageText {
  readonly title: string;
  readonly lines: readonly string[];
  readonly severity: Severity;
}

/** A reason is cut here: a line is about one folder, and the History holds the rest. */
const REASON_MAX = 300;

/** `escape` is applied to every value that comes from outside (paths, reasons, names): Discord's markdown needs it. */
export function describeBatch(batch: Batch, escape: (text: string) => string = (text) => text): MessageText {
  if (batch.test) {
    return {
      title: "autoscan: test message",
      lines: [`A test message from autoscan's notifier '${escape(batch.notifier)}'. If you read this, notifications work.`],
      severity: "info",
    };
  }
  const lines = batch.events.map((event) => describeEvent(event, escape));
  if (batch.dropped > 0) {
    lines.push(`(${String(batch.dropped)} earlier event(s) were left out: this notifier could not deliver for a while and kept only the newest.)`);
  }
  return { title: titleOf(batch.events, escape), lines, severity: severityOf(batch.events) };
}

function describeEvent(event: NotifyEvent, escape: (text: string) => string): string {
  const folder = escape(event.folder ?? "(no folder)");
  const target = escape(event.target ?? "(unknown server)");
  const app = escape(event.app ?? "(unknown app)");
  const reason = event.reason ? escape(shorten(event.reason)) : undefined;
  switch (event.event) {
    case "failed":
      return `Failed: ${folder}${reason ? ` — ${reason}` : ""}`;
    case "not_visible":
      return `Not visible on ${target}: ${folder}${reason ? ` — ${reason}` : ""}`;
    case "target_down":
      return `${target} stopped answering${reason ? `: ${reason}` : ""}`;
    case "target_up":
      return `${target} answers again${reason ? ` (${reason})` : ""}`;
    case "arr_disconnected":
      return `${app} stopped sending webhooks${reason ? `: ${reason}` : ""}`;
    case "backfill_found":
      return `Queued from ${app}'s history (no webhook brought it): ${folder}`;
  }
}

function titleOf(events: readonly NotifyEvent[], escape: (text: string) => string): string {
  const counts = new Map<NotifyEventName, number>();
  for (const event of events) counts.set(event.event, (counts.get(event.event) ?? 0) + 1);
  const [first] = events;
  if (counts.size === 1 && first) {
    const n = events.length;
    const one = n === 1;
    switch (first.event) {
      case "failed":
        return one ? "autoscan: a folder failed" : `autoscan: ${String(n)} folders failed`;
      case "not_visible":
        return one ? "autoscan: a folder is not visible" : `autoscan: ${String(n)} folders are not visible`;
      case "target_down":
        return one ? `autoscan: ${escape(first.target ?? "a server")} stopped answering` : `autoscan: ${String(n)} servers stopped answering`;
      case "target_up":
        return one ? `autoscan: ${escape(first.target ?? "a server")} answers again` : `autoscan: ${String(n)} servers answer again`;
      case "arr_disconnected":
        return one ? `autoscan: ${escape(first.app ?? "an app")} stopped sending webhooks` : `autoscan: ${String(n)} apps stopped sending webhooks`;
      case "backfill_found":
        return `autoscan: the backfill queued ${String(n)} folder(s) no webhook brought`;
    }
  }
  const parts = [...counts].map(([event, count]) => `${String(count)} ${PART_WORDS[event]}`);
  return `autoscan: ${parts.join(", ")}`;
}

const PART_WORDS: Readonly<Record<NotifyEventName, string>> = {
  failed: "failed",
  not_visible: "not visible",
  target_down: "server(s) down",
  target_up: "server(s) back",
  arr_disconnected: "app(s) disconnected",
  backfill_found: "found by the backfill",
};

const FAILURES: ReadonlySet<NotifyEventName> = new Set(["failed", "not_visible", "target_down", "arr_disconnected"]);

/** The worst of the batch: any failure is a failure; servers coming back alone are good news. */
function severityOf(events: readonly NotifyEvent[]): Severity {
  if (events.some((event) => FAILURES.has(event.event))) return "failure";
  if (events.length > 0 && events.every((event) => event.event === "target_up")) return "success";
  return "info";
}

function shorten(text: string): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > REASON_MAX ? `${line.slice(0, REASON_MAX - 1)}…` : line;
}

/**
 * `head` and as many `lines` as fit within `limit` (as `measure` counts: characters, or bytes), one per line; when they
 * do not all fit, the last line says how many were left out ("… and 37 more"). The first line is always shown, cut
 * when it alone is too long, so a message is never only a count. Never longer than `limit`.
 */
export function fitLines(head: string, lines: readonly string[], limit: number, measure: (text: string) => number = (text) => text.length): string {
  const join = (parts: readonly string[]): string => parts.filter((part) => part !== "").join("\n");
  const kept: string[] = [head];
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index] ?? "";
    const left = lines.length - index - 1;
    const trailer = left > 0 ? `… and ${String(left)} more` : "";
    if (measure(join([...kept, line, trailer])) <= limit) {
      kept.push(line);
      continue;
    }
    if (index === 0) {
      const room = limit - (trailer === "" ? 0 : measure(`\n${trailer}`));
      return join([cut(join([...kept, line]), room, measure), trailer]);
    }
    return cut(join([...kept, `… and ${String(lines.length - index)} more`]), limit, measure);
  }
  return cut(join(kept), limit, measure);
}

function cut(text: string, limit: number, measure: (text: string) => number): string {
  if (measure(text) <= limit) return text;
  let out = text;
  while (out.length > 0 && measure(`${out}…`) > limit) out = out.slice(0, out.length - Math.max(1, Math.ceil((measure(out) - limit) / 4)));
  // Never half a surrogate pair (an emoji in a folder name).
  return `${out.replace(/[\uD800-\uDBFF]$/, "")}…`;
}
