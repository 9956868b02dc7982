import type { Context } from "hono";
import { landedFilter, type HistoryQuery } from "../../core/queue-view.ts";
import type { Handler } from "../responses.ts";
import { consoleHtml, type ConsoleDeps } from "./console-deps.ts";
import { renderHistoryPage } from "./history-page.ts";
import { noticeFromQuery, noticeText, type ActionAnswer } from "./notice.ts";
import { renderQueuePage } from "./queue-page.ts";

/** `GET /<SERVER_PASS>/queue` and `/history`: read the queue port, render, answer. */
const QUEUE_PAGE = 50;
const HISTORY_PAGE = 50;

export function createQueuePageHandler(deps: ConsoleDeps): Handler {
  return async (c) => {
    const offset = offsetParam(c);
    const page = await deps.options.queue.listPending({ limit: QUEUE_PAGE, offset });
    const self = selfUrl(c, `${deps.shell.base}/queue`);
    return consoleHtml(
      c,
      renderQueuePage({
        shell: deps.shell,
        items: page.items,
        total: page.total,
        offset,
        pageSize: QUEUE_PAGE,
        now: deps.now(),
        activity: deps.sources.activity?.() ?? { checking: [], scanning: [] },
        targets: deps.sources.targets?.() ?? [],
        self,
        ...(deps.sources.backfill ? { backfill: deps.sources.backfill() } : {}),
        ...importingOf(deps),
        ...(deps.sources.refused ? { refused: deps.sources.refused.recent() } : {}),
        ...(await remappedOf(deps)),
        ...(deps.sources.arrProblems ? { arrProblems: deps.sources.arrProblems() } : {}),
        ...(deps.sources.arrNotes ? { arrNotes: deps.sources.arrNotes() } : {}),
        ...(deps.sources.watchers ? { watchers: deps.sources.watchers() } : {}),
        ...withNotice(await notice(c, deps)),
      }),
    );
  };
}

/** The refused requests today's mappings reach (the offer to retry them); a read that fails hides the offer. */
async function remappedOf(deps: ConsoleDeps): Promise<{ remapped?: number }> {
  const count = await Promise.resolve(deps.options.queue.remappedCount?.()).catch(() => undefined);
  return count ? { remapped: count } : {};
}

function importingOf(deps: ConsoleDeps): { importing?: { done: number; total: number } } {
  const importing = deps.options.queue.importing?.();
  return importing ? { importing } : {};
}

export function createHistoryPageHandler(deps: ConsoleDeps): Handler {
  return async (c) => {
    const query = historyQuery(c);
    const { queue } = deps.options;
    const [page, sources, failed] = await Promise.all([
      queue.listHistory({ ...query, limit: HISTORY_PAGE }),
      queue.sources(),
      query.state === "failed" && !query.source && !query.search && !query.landed ? undefined : queue.listHistory({ state: "failed", limit: 1 }),
    ]);
    return consoleHtml(
      c,
      renderHistoryPage({
        shell: deps.shell,
        items: page.items,
        total: page.total,
        query,
        pageSize: HISTORY_PAGE,
        sources,
        failedCount: failed?.total ?? page.total,
        now: deps.now(),
        targets: deps.sources.targets?.() ?? [],
        self: selfUrl(c, `${deps.shell.base}/history`),
        ...(await remappedOf(deps)),
        ...withNotice(await notice(c, deps)),
      }),
    );
  };
}

function historyQuery(c: Context): HistoryQuery & { offset: number } {
  const state = c.req.query("state");
  const source = c.req.query("source")?.trim();
  const search = c.req.query("q")?.trim().slice(0, 500);
  const landed = landedFilter(c.req.query("landed"));
  return {
    offset: offsetParam(c),
    ...(state === "done" || state === "failed" ? { state } : {}),
    ...(source ? { source } : {}),
    ...(search ? { search } : {}),
    ...(landed ? { landed } : {}),
  };
}

function offsetParam(c: Context): number {
  const raw = c.req.query("offset") ?? "";
  return /^\d{1,9}$/.test(raw) ? Number(raw) : 0;
}

/** The page's own URL without the notice parameters: where its actions come back to. */
function selfUrl(c: Context, path: string): string {
  const params = new URLSearchParams(new URL(c.req.url).search);
  for (const name of ["notice", "item", "n"]) params.delete(name);
  const text = params.toString();
  return text ? `${path}?${text}` : path;
}

async function notice(c: Context, deps: ConsoleDeps): Promise<ActionAnswer | undefined> {
  const found = noticeFromQuery((name) => c.req.query(name));
  if (!found) return undefined;
  const item = found.item ? await deps.options.queue.getItem(found.item) : undefined;
  const subject = item ? item.folder : found.item ? `Folder #${found.item}` : "The folder";
  return noticeText(found.code, subject, found.count);
}

function withNotice(answer: ActionAnswer | undefined): { notice?: ActionAnswer } {
  return answer ? { notice: answer } : {};
}
