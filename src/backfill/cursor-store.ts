import { readFile, rename } from "node:fs/promises";
import { writeFileDurably } from "../core/durable-file.ts";
import type { Logger } from "../core/logger.ts";

/**
 * Where each *arr app's history was read up to: the newest record's time and id, per app name, in one small JSON file
 * in the data directory (`backfill.json`), replaced whole and durably (fsync, rename, folder fsync) at each move. It
 * moves only after the requests of a read are stored in the queue, so a crash re-reads and never skips.
 */
export interface Cursor {
  /** The newest record read (ms since the epoch, as the app dated it). */
  readonly date: number;
  readonly id: number;
}

export interface CursorStore {
  get(app: string): Cursor | undefined;
  set(app: string, cursor: Cursor): Promise<void>;
}

interface FileShape {
  readonly version: 1;
  readonly apps: Record<string, { date: string; id: number }>;
}

export async function openCursorStore(file: string, log: Logger): Promise<CursorStore> {
  const cursors = new Map<string, Cursor>(Object.entries(await readCursors(file, log)));
  let chain: Promise<void> = Promise.resolve();
  return {
    get: (app) => cursors.get(app),
    set(app, cursor) {
      const run = chain.then(async () => {
        const next = new Map(cursors).set(app, cursor);
        const shape: FileShape = {
          version: 1,
          apps: Object.fromEntries([...next].map(([name, c]) => [name, { date: new Date(c.date).toISOString(), id: c.id }])),
        };
        await writeFileDurably(file, `${JSON.stringify(shape, null, 2)}\n`, { log });
        cursors.set(app, cursor);
      });
      chain = run.catch(() => undefined);
      return run;
    },
  };
}

async function readCursors(file: string, log: Logger): Promise<Record<string, Cursor>> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return {};
    throw error;
  }
  try {
    const shape = JSON.parse(text) as FileShape;
    if (shape?.version !== 1 || typeof shape.apps !== "object" || shape.apps === null || Array.isArray(shape.apps)) {
      throw new Error("not a cursor file");
    }
    const out: Record<string, Cursor> = {};
    for (const [name, value] of Object.entries(shape.apps)) {
      const date = Date.parse(value.date);
      if (!Number.isFinite(date) || !Number.isInteger(value.id)) throw new Error(`a bad cursor for '${name}'`);
      out[name] = { date, id: value.id };
    }
    return out;
  } catch {
    // A damaged file: kept aside for a person to look at; each app starts again from "now" (nothing old is flooded in).
    const aside = `${file}.damaged`;
    await rename(file, aside).catch(() => undefined);
    log.warn({ file, aside }, `The backfill cursors in '${file}' could not be read; kept as '${aside}'. Each app's history is read from now on.`);
    return {};
  }
}
