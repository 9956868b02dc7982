import type { FormatMessage } from "../batch.ts";
import { describeBatch, fitLines } from "../message-text.ts";

/**
 * Discord's Execute Webhook (`POST /api/webhooks/{id}/{token}`, JSON): one message whose `content` holds the title in
 * bold and one line per event, within Discord's 2,000-character limit ("… and 37 more" beyond it). Paths and reasons
 * are escaped so that Discord's markdown shows them as they are, and `allowed_mentions` is empty so that a folder
 * named "@everyone" pings nobody. Discord answers 204 No Content (no `wait`); a 429 carries `retry_after` in seconds.
 * https://discord.com/developers/docs/resources/webhook#execute-webhook
 */
export const DISCORD_CONTENT_MAX = 2000;

export const formatDiscord: FormatMessage = (batch) => {
  const text = describeBatch(batch, escapeMarkdown);
  const content = fitLines(`**${text.title}**`, text.lines, DISCORD_CONTENT_MAX);
  return {
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ username: "autoscan", content, allowed_mentions: { parse: [] } }),
  };
};

/**
 * A backslash before each character Discord's markdown reads inside a line (a backslash, `*`, `_`, `~`, `` ` ``, `|`, `>`, `[`,
 * `]`, `<`): Discord shows an escaped character as it is.
 */
export function escapeMarkdown(text: string): string {
  return text.replace(/[\\*_~`|>[\]<]/g, (character) => `\\${character}`);
}
