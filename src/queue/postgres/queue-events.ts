import pg from "pg";
import type { Logger } from "../../core/logger.ts";
import type { QueueEvent } from "../store-port.ts";
import { prepared } from "./pg-reads.ts";
import type { PgQueryable } from "./pool.ts";

/**
 * Instances tell each other about queue changes with PostgreSQL's NOTIFY: every write transaction sends one on
 * `autoscan_queue` (delivered to every listening instance when it commits). `w:<ms>` is new work that may be due that
 * many ms after the commit (a request, a retry): each dispatcher looks again then, on its own clock; `c` is any other change (the console's live pages
 * refresh). A lost listening connection is opened again after 2 s; until then the dispatchers still look every poll.
 */
export const QUEUE_CHANNEL = "autoscan_queue";


/** Payload `<instance> w:<ms>` or `<instance> c`: an instance hears its own changes directly, not through here. */
export async function sendQueueEvent(db: PgQueryable, from: string, event: QueueEvent): Promise<void> {
  const payload = event.kind === "work" ? `${from} w:${String(Math.max(0, Math.round(event.inMs)))}` : `${from} c`;
  await db.query(prepared("SELECT pg_notify($1, $2)", [QUEUE_CHANNEL, payload]));
}

export function parseQueueEvent(payload: string | undefined): { from: string; event: QueueEvent } {
  const [from = "", what = ""] = (payload ?? "").split(" ", 2);
  if (what.startsWith("w:")) {
    const inMs = Number(what.slice(2));
    if (Number.isFinite(inMs)) return { from, event: { kind: "work", inMs } };
  }
  return { from, event: { kind: "change" } };
}

export interface QueueEventListener {
  /** Settles once the first attempt to listen ended (listening, or failed and retrying). */
  readonly ready: Promise<void>;
  close(): Promise<void>;
}

export function listenForQueueEvents(options: {
  readonly url: string;
  readonly applicationName: string;
  /** This instance's id: its own announcements are left out. */
  readonly instance: string;
  readonly log: Logger;
  readonly onEvent: (event: QueueEvent) => void;
}): QueueEventListener {
  const { log } = options;
  let client: pg.Client | undefined;
  let closed = false;
  let timer: NodeJS.Timeout | undefined;
  let warned = false;
  let heardBefore = false;

  const again = (): void => {
    if (closed || timer) return;
    timer = setTimeout(() => {
      timer = undefined;
      void connect();
    }, 2_000);
    timer.unref();
  };

  async function connect(): Promise<void> {
    const next = new pg.Client({ connectionString: options.url, application_name: `${options.applicationName} listen`.slice(0, 63), keepAlive: true, connectionTimeoutMillis: 5_000 });
    next.on("notification", (message) => {
      if (message.channel !== QUEUE_CHANNEL) return;
      const { from, event } = parseQueueEvent(message.payload);
      if (from !== options.instance) options.onEvent(event);
    });
    next.on("error", (error) => {
      if (!warned) log.warn({ err: error }, `Lost the connection that hears other instances' queue changes (${error.message}); reconnecting`);
      warned = true;
      client = undefined;
      next.end().catch(() => undefined);
      again();
    });
    try {
      await next.connect();
      await next.query(`LISTEN ${QUEUE_CHANNEL}`);
      if (closed) {
        await next.end();
        return;
      }
      client = next;
      if (heardBefore) {
        log.info("Hearing other instances' queue changes again.");
        // Changes made while nobody listened: the dispatcher looks again now.
        options.onEvent({ kind: "work", inMs: 0 });
      }
      heardBefore = true;
      warned = false;
    } catch (error) {
      await next.end().catch(() => undefined);
      if (!warned) log.warn({ err: error }, `Could not listen for other instances' queue changes (${(error as Error).message}); retrying`);
      warned = true;
      again();
    }
  }

  const ready = connect();
  return {
    ready,
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      await client?.end().catch(() => undefined);
    },
  };
}
