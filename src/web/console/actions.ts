import type { Context } from "hono";
import { clientAddress } from "../client-address.ts";
import { readBody } from "../read-body.ts";
import { bodyProblem, type Handler } from "../responses.ts";
import type { ConsoleDeps } from "./console-deps.ts";
import { consoleActionProblem } from "./csrf.ts";
import { noticeText, type ActionAnswer, type NoticeCode } from "./notice.ts";
import { NO_FILES_TO_REFRESH, refreshItem, type RefreshAsked } from "../refresh-item.ts";

/**
 * The console's actions: `POST /<SERVER_PASS>/items/<id>/(scan|retry|delete|refresh)`,
 * `POST /<SERVER_PASS>/history/retry-failed` and `…/history/retry-unmapped`. Each is checked against cross-site use (`csrf.ts`), logged with the
 * item's id, and answered with what happened: JSON `{ok,title,message}` to the page script, or a redirect back to
 * the page with a notice code when the form was posted without it.
 */
const ACTIONS: ReadonlySet<string> = new Set(["scan", "retry", "delete", "refresh"]);

export function createItemActionHandler(deps: ConsoleDeps): Handler {
  return async (c) => {
    const action = c.req.param("action") ?? "";
    const id = c.req.param("id") ?? "";
    if (!ACTIONS.has(action) || !/^\d{1,15}$/.test(id)) return c.text("Not Found", 404);
    const form = await readForm(c, deps);
    if (form instanceof Response) return form;
    const refused = refusal(c, deps, form, `${action} of item ${id}`);
    if (refused) return refused;
    const { queue } = deps.options;
    const item = await queue.getItem(id);
    const subject = item?.folder ?? `Folder #${id}`;
    if (action === "refresh") return refreshAction(c, deps, form, id, subject, await refreshItem(item, deps.options.sink, "Console", `client '${clientAddress(c)}'`));
    const done = item ? (action === "delete" ? await queue.remove(id) : await queue.retry(id)) : false;
    // A retry whose requests today's SERVER_PATH_MAPPINGS map elsewhere leaves no item under this id: they wait there.
    const moved = done && action !== "delete" && (await queue.getItem(id)) === undefined;
    const code: NoticeCode = done ? (moved ? "moved" : (action as NoticeCode)) : "missing";
    // The item's id in `id`, as every other line about this folder has it.
    if (done) deps.log.info({ id: Number(id), action, client: clientAddress(c) }, `Console: ${LOG_WORDS[action] ?? action} '${subject}'`);
    else deps.log.info({ id: Number(id), action, client: clientAddress(c) }, `Console: ${action} of item ${id} found no such item`);
    return answer(c, deps, form, noticeText(code, subject), { notice: code, item: id });
  };
}

/** "Refresh" on a History item: queued like a request (durable before the answer), or why there is nothing to refresh. */
function refreshAction(c: Context, deps: ConsoleDeps, form: Form, id: string, subject: string, asked: RefreshAsked): Response {
  const fields = { id: Number(id), action: "refresh", client: clientAddress(c) };
  if (asked.kind === "no-files") {
    deps.log.info(fields, `Console: nothing to refresh for '${subject}': ${NO_FILES_TO_REFRESH}`);
    return answer(c, deps, form, { ok: false, title: "Nothing to refresh", message: `${subject}: ${NO_FILES_TO_REFRESH}.` }, { notice: "refresh-none", item: id });
  }
  const code: NoticeCode = asked.kind === "queued" ? "refresh" : "missing";
  if (asked.kind === "queued") deps.log.info({ ...fields, files: asked.files }, `Console: refresh in place asked for ${String(asked.files)} file(s) of '${subject}'`);
  return answer(c, deps, form, noticeText(code, subject), { notice: code, item: id });
}

export function createRetryFailedHandler(deps: ConsoleDeps): Handler {
  return async (c) => {
    const form = await readForm(c, deps);
    if (form instanceof Response) return form;
    const refused = refusal(c, deps, form, "retry of every failed folder");
    if (refused) return refused;
    const count = await deps.options.queue.retryFailed();
    deps.log.info({ action: "retry-failed", count, client: clientAddress(c) }, `Console: retried ${count} failed folder(s)`);
    return answer(c, deps, form, noticeText("retry-failed", "", count), { notice: "retry-failed", n: String(count) });
  };
}

/**
 * `POST /<SERVER_PASS>/history/retry-unmapped`: the requests refused for lack of a mapping that today's
 * SERVER_PATH_MAPPINGS reach are retried (they wait under the mapped folder); those still unmapped stay in History.
 */
export function createRetryUnmappedHandler(deps: ConsoleDeps): Handler {
  return async (c) => {
    const form = await readForm(c, deps);
    if (form instanceof Response) return form;
    const refused = refusal(c, deps, form, "retry of the unmapped requests");
    if (refused) return refused;
    const count = (await deps.options.queue.retryRemapped?.()) ?? 0;
    deps.log.info({ action: "retry-unmapped", count, client: clientAddress(c) }, `Console: retried ${count} request(s) refused for lack of a mapping`);
    return answer(c, deps, form, noticeText("retry-unmapped", "", count), { notice: "retry-unmapped", n: String(count) });
  };
}

/** `POST /<SERVER_PASS>/refused/dismiss`: hides the Queue page's list of refused paths (History keeps them). */
export function createDismissRefusedHandler(deps: ConsoleDeps): Handler {
  return async (c) => {
    const form = await readForm(c, deps);
    if (form instanceof Response) return form;
    const refused = refusal(c, deps, form, "dismissal of the refused paths");
    if (refused) return refused;
    deps.sources.refused?.dismiss();
    return answer(c, deps, form, { ok: true, title: "Dismissed", message: "The refused paths are still in History." }, {});
  };
}

const LOG_WORDS: Readonly<Record<string, string>> = { scan: "scan now of", retry: "retry of", delete: "deleted" };

type Form = (name: string) => string | undefined;

async function readForm(c: Context, deps: ConsoleDeps): Promise<Form | Response> {
  const body = await readBody(c, deps.maxBodyBytes);
  switch (body.kind) {
    case "problem":
      return bodyProblem(c, body.status, body.reason);
    case "empty":
      return () => undefined;
    case "form":
      return (name) => body.fields.get(name)?.[0];
    case "json": {
      const fields = typeof body.value === "object" && body.value !== null ? (body.value as Record<string, unknown>) : {};
      return (name) => (typeof fields[name] === "string" ? fields[name] : undefined);
    }
  }
}

function refusal(c: Context, deps: ConsoleDeps, form: Form, what: string): Response | undefined {
  const problem = consoleActionProblem(c, deps.shell.csrf, form("token"));
  if (!problem) return undefined;
  deps.log.warn({ client: clientAddress(c), reason: problem }, `Console: refused the ${what}: ${problem}`);
  const refused: ActionAnswer = { ok: false, title: "Refused", message: `Not done: ${problem}.` };
  return c.json(refused, 403, { "cache-control": "no-store" });
}

function wantsJson(c: Context): boolean {
  return (c.req.header("accept") ?? "").includes("application/json");
}

function answer(c: Context, deps: ConsoleDeps, form: Form, result: ActionAnswer, notice: Record<string, string>): Response {
  if (wantsJson(c)) return c.json(result, result.ok ? 200 : 404, { "cache-control": "no-store" });
  const back = safeBack(form("back"), deps.shell.base);
  const url = new URL(back, "http://console.invalid");
  for (const [name, value] of Object.entries(notice)) url.searchParams.set(name, value);
  return c.redirect(`${url.pathname}${url.search}`, 303);
}

/** Only a page of this console: anything else (another site, a scheme, `//host`) goes back to the queue. */
function safeBack(raw: string | undefined, base: string): string {
  if (raw && (raw === base || raw.startsWith(`${base}/`) || raw.startsWith(`${base}?`)) && !/[\\\s]|\/\//.test(raw)) return raw;
  return `${base}/queue`;
}
