import { safeDecode } from "../../core/safe-decode.ts";

/**
 * The secrets a probe holds (a key, a password, one in the URL's userinfo), blanked from every message it hands on:
 * doctor's output and its log never carry them.
 */
export function blankerOf(secrets: readonly string[], url = ""): (text: string) => string {
  const all = [...secrets, ...userinfoSecrets(url)].filter((secret) => secret.length > 0);
  return (text) => all.reduce((out, secret) => out.split(secret).join("***"), text);
}

/** An error whose message may quote a secret, blanked in place (its class and cause kept). */
export function blankError(error: unknown, blank: (text: string) => string): unknown {
  // A DOMException's message cannot be set: such an error carries no secret anyway (the platform's own words).
  if (error instanceof Error && blank(error.message) !== error.message) {
    Object.defineProperty(error, "message", { value: blank(error.message), configurable: true, writable: true });
  }
  return error;
}

/** A password in the URL (`http://user:pass@host`), as written and decoded. */
function userinfoSecrets(url: string): string[] {
  const password = URL.parse(url)?.password;
  return password ? [password, safeDecode(password)] : [];
}
