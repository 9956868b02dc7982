import type { RedirectResult } from "./loopback-receiver.ts";
import { safeDecode } from "../core/safe-decode.ts";

/**
 * What a person pastes at `Enter authorization code:`: either the bare code (`4/0AfJ…`) or the whole address the
 * browser ended on (`http://127.0.0.1:53682/?state=…&code=4%2F0AfJ…&scope=…`; the page fails to load on a headless
 * box but the address bar still holds it). The code is URL-decoded (it contains `/`). Anything else (a word, the
 * client secret, a token) is refused here with a hint, never sent to Google.
 */
export type PastedAnswer = RedirectResult | { readonly problem: string };

/**
 * Google's authorization codes are `<digit>/<base64url>` (`4/0AfJohX…`); refresh tokens (`1//0g…`), access tokens
 * (`ya29.…`) and client secrets (`GOCSPX-…`) are not.
 */
const CODE_SHAPE = /^\d\/[\w\-.~]+$/;

export const NOT_AN_ANSWER =
  "That is neither an authorization code (4/0A…) nor the address your browser ended on (http://127.0.0.1:…/?state=…&code=…). " +
  "After you allow access, copy the whole address from the browser's address bar and paste it here.";

export function parsePastedAnswer(text: string, expectedState: string): PastedAnswer {
  const input = text.trim().replace(/^["']|["']$/g, "");
  if (!input) return { problem: "Nothing was entered." };
  if (!/[?&](code|error|state)=/.test(input) && !/^https?:\/\//i.test(input)) {
    const code = input.includes("%") ? safeDecode(input) : input;
    return CODE_SHAPE.test(code) ? { code } : { problem: NOT_AN_ANSWER };
  }
  const query = input.includes("?") ? input.slice(input.indexOf("?") + 1) : input;
  const params = new URLSearchParams(query.split("#")[0]);
  const state = params.get("state");
  if (state !== null && state !== expectedState) {
    return { problem: "That URL belongs to another authorization attempt (its state does not match). Open the link printed above and paste the URL you end on." };
  }
  const error = params.get("error");
  if (error) return { error, description: params.get("error_description") ?? undefined };
  const code = params.get("code");
  if (!code) return { problem: "That URL holds no code= parameter. Paste the address your browser ended on after you allowed access." };
  return { code };
}
