import type { FormatMessage } from "../batch.ts";

/**
 * Any receiver that takes JSON (Home Assistant, n8n, a script): one document per message,
 * `{event, at, instance, notifier, items: [{event, at, folder, target, reason, app, id}], dropped}`. `event` is the
 * items' event when they share one, `mixed` when a window gathered several kinds (each item says its own), `test` for
 * `autoscan notify test`. Times are ISO 8601 (UTC); a field an event does not carry is left out.
 */
export const formatWebhook: FormatMessage = (batch) => {
  const kinds = new Set(batch.events.map((event) => event.event));
  const event = batch.test ? "test" : kinds.size === 1 ? [...kinds][0] : "mixed";
  const items = batch.events.map((item) => ({
    event: item.event,
    at: new Date(item.at).toISOString(),
    folder: item.folder,
    target: item.target,
    reason: item.reason,
    app: item.app,
    id: item.id,
  }));
  return {
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ event, at: new Date(batch.at).toISOString(), instance: batch.instance, notifier: batch.notifier, items, dropped: batch.dropped }),
  };
};
