import type { Context } from "hono";
import { stream } from "hono/streaming";
import { describeError } from "../../core/errors.ts";
import type { RouteDeps } from "../deps.ts";
import type { BackfillEvent } from "../options.ts";

/**
 * `cmd=backfill` (`autoscan backfill` calls it): one read of the *arr apps' history now, from `since` (ISO 8601 or a
 * duration: `90m`, `12h`, `2d`, `1w`), for one `app` or all, optionally a `dry_run`. The answer is a stream of JSON
 * lines (progress, each request a dry run would queue, then `{"kind":"done",…}`), so a long read shows where it is.
 */
type Params = (name: string) => string | undefined;

export async function answerBackfill(c: Context, params: Params, deps: RouteDeps): Promise<Response> {
  const backfill = deps.options.backfill;
  if (!backfill) return c.json({ success: false, msg: "No *arr app is configured for the backfill: add it under ARR in config.json" });
  const since = parseSince(params("since"), Date.now());
  if (typeof since === "string") return c.json({ success: false, msg: since });
  const app = params("app")?.trim() || undefined;
  if (app !== undefined && !backfill.apps.includes(app)) {
    return c.json({ success: false, msg: `No app '${app}' under ARR (known: ${backfill.apps.join(", ") || "none"})` });
  }
  const dryRun = /^(1|true|yes)$/i.test(params("dry_run") ?? "");
  deps.log.info({ since: since === undefined ? undefined : new Date(since).toISOString(), app, dryRun }, "Backfill asked for through the API");
  c.header("content-type", "application/x-ndjson; charset=utf-8");
  c.header("cache-control", "no-store");
  return stream(c, async (out) => {
    const abort = new AbortController();
    out.onAbort(() => abort.abort());
    const write = (line: unknown): void => void out.write(`${JSON.stringify(line)}\n`).catch(() => undefined);
    try {
      const results = await backfill.run(
        { dryRun, ...(since === undefined ? {} : { since }), ...(app ? { app } : {}) },
        (event: BackfillEvent) => write(event),
        abort.signal,
      );
      write({ kind: "done", success: results.every((r) => r.ok), apps: results });
    } catch (error) {
      write({ kind: "done", success: false, msg: `The backfill failed: ${describeError(error)}` });
    }
  });
}

const UNITS: Readonly<Record<string, number>> = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** `since`: absent → from each app's cursor; an ISO time; or a duration back from now. A problem in words otherwise. */
export function parseSince(raw: string | undefined, now: number): number | undefined | string {
  const text = raw?.trim();
  if (!text) return undefined;
  const duration = /^(\d{1,6})\s*([mhdw])$/i.exec(text);
  if (duration) return now - Number(duration[1]) * (UNITS[duration[2]!.toLowerCase()] ?? 0);
  if (/^\d{4}-\d\d-\d\d/.test(text)) {
    const at = Date.parse(text);
    if (Number.isFinite(at)) return at > now ? `since (${text}) is in the future` : at;
  }
  return `since must be an ISO 8601 time (2026-11-24T18:00:00Z, 2026-11-24) or a duration back from now (90m, 12h, 2d, 1w); got "${text.slice(0, 60)}"`;
}
