import { describe, expect, it } from "vitest";
import { describeUnreachable } from "./google-unreachable.ts";

/** The shapes google-auth-library's HTTP client throws: its own error, with the socket's error as `cause`. */
function clientError(code: string, message: string, extra: Record<string, unknown> = {}): Error {
  const cause = Object.assign(new Error(message), { code, ...extra });
  return Object.assign(new Error(`request to https://oauth2.googleapis.com/token failed, reason: ${message}`), { code, cause, response: undefined });
}

const URL = "https://oauth2.googleapis.com/token";

describe("describeUnreachable", () => {
  it.each([
    [clientError("EAI_AGAIN", "getaddrinfo EAI_AGAIN oauth2.googleapis.com", { hostname: "oauth2.googleapis.com" }), "the name oauth2.googleapis.com does not resolve (EAI_AGAIN: no answer from the DNS server)"],
    [clientError("ENOTFOUND", "getaddrinfo ENOTFOUND oauth2.googleapis.com"), "the name oauth2.googleapis.com does not resolve (ENOTFOUND: no such name)"],
    [clientError("ECONNREFUSED", "connect ECONNREFUSED 142.250.1.95:443"), "the connection was refused (ECONNREFUSED)"],
    [clientError("ENETUNREACH", "connect ENETUNREACH 142.250.1.95:443"), "no route to it (ENETUNREACH)"],
    [clientError("SELF_SIGNED_CERT_IN_CHAIN", "self-signed certificate in certificate chain"), "its TLS certificate is not trusted here (SELF_SIGNED_CERT_IN_CHAIN); a proxy or firewall that inspects HTTPS?"],
    [Object.assign(new Error("The operation was aborted due to timeout"), { code: "TimeoutError" }), "no answer within 5 s"],
  ])("%#: names the cause in words, the host, and what to check", (error, why) => {
    const text = describeUnreachable(error, URL, 5_000);
    expect(text).toBe(
      `Cannot reach Google at oauth2.googleapis.com: ${why}. Check DNS and network access from where this command runs (in Docker: inside the autoscan container, whose DNS and network are not the host's), and the proxy if this network needs one (HTTPS_PROXY).`,
    );
  });

  it("leaves an HTTP answer to the caller", () => {
    const refused = Object.assign(new Error("invalid_grant"), { response: { status: 400, data: { error: "invalid_grant" } } });
    expect(describeUnreachable(refused, URL, 5_000)).toBeUndefined();
    expect(describeUnreachable(new Error("something else"), URL, 5_000)).toBeUndefined();
  });
});
