import { describe, expect, it } from "vitest";
import { unresolvedHost } from "./reach-advice.ts";

describe("unresolvedHost: the host an app's refusal says it could not resolve", () => {
  it.each([
    ["Name or service not known (autoscan:3467)", "autoscan"],
    ["Unable to send test message: Unable to post to webhook: Name does not resolve (autoscan:3467)", "autoscan"],
    ["Resource temporarily unavailable (autoscan:3467)", "autoscan"],
    ["No such host is known. (nas.lan:3467)", "nas.lan"],
    ["Unable to post to webhook: getaddrinfo ENOTFOUND autoscan", "autoscan"],
    ["request to http://autoscan:3467/x failed, reason: getaddrinfo EAI_AGAIN autoscan", "autoscan"],
    ["Temporary failure in name resolution", ""],
  ])("%s → %s", (refusal, host) => {
    expect(unresolvedHost(refusal)).toBe(host);
  });

  it.each(["Connection refused (127.0.0.1:3467)", "HTTP request failed: [401:Unauthorized] [POST] at [http://autoscan:3467/x]", "Http request timed out"])(
    "%s is about something else",
    (refusal) => {
      expect(unresolvedHost(refusal)).toBeUndefined();
    },
  );
});
