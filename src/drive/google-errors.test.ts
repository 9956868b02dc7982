import { describe, expect, it } from "vitest";
import { classifyGoogleError, parseRetryAfter } from "./google-errors.ts";

const apiError = (status: number, reason: string, headers: Record<string, string> = {}) => ({
  response: { status, headers: new Headers(headers), data: { error: { code: status, message: reason, errors: [{ domain: "usageLimits", reason }] } } },
});

describe("Google error classification", () => {
  it("403 rate limits and 429 are rate limits (with Retry-After); 5xx and network errors are transient", () => {
    expect(classifyGoogleError(apiError(403, "userRateLimitExceeded", { "retry-after": "5" }))).toMatchObject({ kind: "rate-limit", retryAfterMs: 5000 });
    expect(classifyGoogleError(apiError(403, "rateLimitExceeded")).kind).toBe("rate-limit");
    expect(classifyGoogleError(apiError(429, "x")).kind).toBe("rate-limit");
    expect(classifyGoogleError(apiError(503, "backendError")).kind).toBe("transient");
    expect(classifyGoogleError(Object.assign(new Error("fetch failed"), { code: "ECONNREFUSED" })).kind).toBe("transient");
  });

  it("a plain 403 is not retried; scope and auth problems are told apart", () => {
    expect(classifyGoogleError(apiError(403, "forbidden")).kind).toBe("other");
    expect(classifyGoogleError(apiError(403, "insufficientPermissions")).kind).toBe("scope");
    // A 401 from Drive is a refused access token (renewed once), not a refused grant (final).
    expect(classifyGoogleError(apiError(401, "authError"))).toEqual({ kind: "unauthenticated", detail: "authError" });
    expect(classifyGoogleError(apiError(404, "notFound")).kind).toBe("not-found");
  });

  it("token endpoint errors keep their OAuth code", () => {
    const revoked = { response: { status: 400, data: { error: "invalid_grant", error_description: "Token has been expired or revoked." } } };
    expect(classifyGoogleError(revoked)).toEqual({ kind: "auth", code: "invalid_grant", detail: "invalid_grant: Token has been expired or revoked." });
    expect(classifyGoogleError({ response: { status: 401, data: { error: "unauthorized_client" } } })).toMatchObject({ code: "unauthorized_client" });
  });

  it("Retry-After may be seconds or an HTTP date", () => {
    expect(parseRetryAfter("2", 0)).toBe(2000);
    expect(parseRetryAfter(new Date(10_000).toUTCString(), 4000)).toBe(6000);
    expect(parseRetryAfter("soon", 0)).toBeUndefined();
  });
});
