import type { FormatMessage } from "../batch.ts";
import { describeBatch, fitLines, type Severity } from "../message-text.ts";

/**
 * ntfy's publish (`POST https://ntfy.sh/<topic>`): the body is the message as plain text, one line per event, the
 * title in the `Title` header, with a `Priority` and `Tags` (emoji short codes). ntfy turns a message over 4,096 bytes
 * into an attachment, so the body stays under it ("… and 37 more"). Headers must be ASCII for Node's HTTP client: a
 * title with other characters (a server's name) goes RFC 2047-encoded, which ntfy decodes.
 * https://docs.ntfy.sh/publish/
 */
export const NTFY_BODY_MAX_BYTES = 4000;

const PRIORITY: Readonly<Record<Severity, string>> = { failure: "high", warning: "default", info: "low", success: "default" };
const TAGS: Readonly<Record<Severity, string>> = { failure: "warning", warning: "warning", info: "information_source", success: "white_check_mark" };

export const formatNtfy: FormatMessage = (batch) => {
  const text = describeBatch(batch);
  const body = fitLines("", text.lines, NTFY_BODY_MAX_BYTES, (line) => Buffer.byteLength(line, "utf8"));
  return {
    headers: {
      "Content-Type": "text/plain; charset=utf-8",
      Title: headerText(text.title),
      Priority: batch.test ? "default" : PRIORITY[text.severity],
      Tags: TAGS[text.severity],
    },
    body,
  };
};

/** ASCII as it is; anything else as an RFC 2047 encoded word (`=?UTF-8?B?…?=`). */
export function headerText(text: string): string {
  const line = text.replace(/[\r\n]+/g, " ");
  return /^[\x20-\x7e]*$/.test(line) ? line : `=?UTF-8?B?${Buffer.from(line, "utf8").toString("base64")}?=`;
}
