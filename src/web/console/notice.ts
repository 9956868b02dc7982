import { escapeHtml } from "../../core/escape-html.ts";

/**
 * What an action answers, in words: as JSON to the page script, or, without the script, as a notice on the page the
 * action came from (the redirect carries only a code and the item's id, never text to print).
 */
export interface ActionAnswer {
  readonly ok: boolean;
  readonly title: string;
  readonly message: string;
}

export type NoticeCode = "scan" | "retry" | "delete" | "retry-failed" | "retry-unmapped" | "moved" | "missing" | "refused" | "refresh" | "refresh-none";

export function noticeText(code: NoticeCode, subject: string, count = 0): ActionAnswer {
  switch (code) {
    case "scan":
      return { ok: true, title: "Scanning now", message: `${subject} is due now; it goes out as soon as its target is free.` };
    case "retry":
      return { ok: true, title: "Queued again", message: `${subject} waits for its scan again; only the targets that did not scan it are asked.` };
    case "moved":
      return { ok: true, title: "Queued under the mapped folder", message: `Today's SERVER_PATH_MAPPINGS map the requests of ${subject} to another folder: they wait there for their scan (see the Queue page).` };
    case "delete":
      return { ok: true, title: "Deleted", message: `${subject} was deleted.` };
    case "refresh":
      return { ok: true, title: "Refresh queued", message: `${subject} is scanned again; once each target shows its files, their items are re-read in place (History shows it per target).` };
    case "refresh-none":
      return { ok: false, title: "Nothing to refresh", message: `${subject}: its requests named no file, and a refresh re-reads the item of a file.` };
    case "retry-failed":
      return count === 0
        ? { ok: true, title: "Nothing to retry", message: "No folder has failed." }
        : { ok: true, title: "Queued again", message: `${count} failed folder${count === 1 ? "" : "s"} wait for their scan again.` };
    case "retry-unmapped":
      return count === 0
        ? { ok: true, title: "Nothing to retry", message: "No request refused for lack of a mapping is reached by SERVER_PATH_MAPPINGS now." }
        : { ok: true, title: "Queued again", message: `${count} unmapped request${count === 1 ? "" : "s"} wait${count === 1 ? "s" : ""} for a scan under the mapped folder, after the scan delay.` };
    case "missing":
      return { ok: false, title: "Not found", message: `${subject} is no longer there: it may have finished or been deleted meanwhile.` };
    case "refused":
      return { ok: false, title: "Refused", message: "The action was refused: reload the page and try again." };
  }
}

const CODES: ReadonlySet<string> = new Set(["scan", "retry", "delete", "retry-failed", "retry-unmapped", "moved", "missing", "refused", "refresh", "refresh-none"]);

/** The notice a page shows after a redirect (`?notice=<code>&item=<id>&n=<count>`). */
export function noticeFromQuery(query: (name: string) => string | undefined): { code: NoticeCode; item?: string; count: number } | undefined {
  const code = query("notice");
  if (!code || !CODES.has(code)) return undefined;
  const item = query("item");
  const count = Number.parseInt(query("n") ?? "0", 10);
  return { code: code as NoticeCode, ...(item && /^\d{1,15}$/.test(item) ? { item } : {}), count: Number.isFinite(count) ? count : 0 };
}

export function noticeHtml(answer: ActionAnswer | undefined): string {
  const body = answer
    ? `<section class="flash ${answer.ok ? "ok" : "err"}" role="${answer.ok ? "status" : "alert"}"><h2>${escapeHtml(answer.title)}</h2><p>${escapeHtml(answer.message)}</p></section>`
    : "";
  return `<div id="notice">${body}</div>`;
}
