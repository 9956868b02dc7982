import type { FormatMessage } from "../batch.ts";
import { describeBatch, fitLines } from "../message-text.ts";

/**
 * apprise-api's notify (`POST /notify/<KEY>`, or `/notify` with its `APPRISE_STATELESS_URLS`), JSON
 * `{title, body, type, format}`: `type` is one of `info`, `success`, `warning`, `failure`, and apprise passes the message
 * on to every service configured under the key. It answers 200 when sent, 424 when a service behind it failed (tried
 * again here). The body stays under 4,000 characters; apprise splits or cuts it further per service.
 * https://github.com/caronc/apprise-api#api-details
 */
export const APPRISE_BODY_MAX = 4000;

export const formatApprise: FormatMessage = (batch) => {
  const text = describeBatch(batch);
  return {
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ title: text.title, body: fitLines("", text.lines, APPRISE_BODY_MAX), type: text.severity, format: "text" }),
  };
};
