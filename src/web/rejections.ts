import type { Logger } from "../core/logger.ts";

/**
 * Refused requests (a wrong URL secret, wrong Basic credentials) are logged without letting a client that has no
 * secret flood the log: a client's first refusal is one line, the rest within an interval are counted and told in
 * one summary line per client at the end of it. Memory is bounded: past `maxClients` tracked clients, refusals are
 * only counted together.
 */
export type RejectionReason = "wrong secret" | "wrong credentials" | "too many wrong secrets";

export interface RejectionLog {
  refuse(client: string, reason: RejectionReason, detail: string): void;
  /** Writes the pending summaries and stops the timer. */
  close(): void;
}

export interface RejectionLogOptions {
  readonly log: Logger;
  readonly intervalMs?: number;
  readonly maxClients?: number;
}

interface Tally {
  counts: Map<RejectionReason, number>;
}

export function createRejectionLog(options: RejectionLogOptions): RejectionLog {
  const { log } = options;
  const intervalMs = options.intervalMs ?? 60_000;
  const maxClients = options.maxClients ?? 256;
  const seconds = Math.round(intervalMs / 1000);
  const clients = new Map<string, Tally>();
  let others = 0;
  let timer: NodeJS.Timeout | undefined;

  const summarise = (): void => {
    for (const [client, tally] of clients) {
      if (tally.counts.size === 0) {
        // Quiet for a whole interval: its next refusal is told at once again.
        clients.delete(client);
        continue;
      }
      const total = [...tally.counts.values()].reduce((a, b) => a + b, 0);
      const byReason = [...tally.counts].map(([reason, count]) => `${reason}: ${count}`).join(", ");
      log.warn({ client, refused: total }, `Client '${client}' was refused ${total} more time(s) in the last ${seconds} s (${byReason}).`);
      tally.counts.clear();
    }
    if (others > 0) {
      log.warn({ refused: others }, `${others} more request(s) from other clients were refused in the last ${seconds} s.`);
      others = 0;
    }
    if (clients.size === 0 && timer) {
      clearInterval(timer);
      timer = undefined;
    }
  };

  return {
    refuse(client, reason, detail) {
      const tally = clients.get(client);
      if (tally) {
        tally.counts.set(reason, (tally.counts.get(reason) ?? 0) + 1);
        return;
      }
      if (clients.size >= maxClients) {
        others += 1;
        return;
      }
      clients.set(client, { counts: new Map() });
      timer ??= setInterval(summarise, intervalMs).unref();
      log.warn({ client, reason }, `Refused client '${client}': ${detail}. Further refusals from it are summarised every ${seconds} s.`);
    },
    close() {
      summarise();
      if (timer) clearInterval(timer);
      timer = undefined;
    },
  };
}
