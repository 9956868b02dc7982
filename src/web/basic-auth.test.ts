import { describe, expect, it } from "vitest";
import { isAuthorized, parseBasicAuth } from "./basic-auth.ts";

const header = (raw: Buffer | string) => `Basic ${Buffer.from(raw).toString("base64")}`;

describe("HTTP Basic auth", () => {
  it("parses user:password, with ':' allowed in the password", () => {
    expect(parseBasicAuth(header("tdarr:a:b"))).toEqual({ username: "tdarr", password: "a:b" });
    expect(parseBasicAuth("basic   " + Buffer.from("u:p").toString("base64"))).toEqual({ username: "u", password: "p" });
  });

  it("refuses other schemes, broken base64 and a missing colon", () => {
    for (const bad of [undefined, "", "Bearer abc", "Basic", "Basic !!!", header("nocolon")]) {
      expect(parseBasicAuth(bad), String(bad)).toBeUndefined();
    }
  });

  it("reads UTF-8, and ISO-8859-1 as the *arr apps send it", () => {
    expect(parseBasicAuth(header("jürgen:pässword"))).toEqual({ username: "jürgen", password: "pässword" });
    expect(parseBasicAuth(header(Buffer.from("jürgen:pässword", "latin1")))).toEqual({ username: "jürgen", password: "pässword" });
  });

  it("authorizes only the exact pair", () => {
    const expected = { username: "tdarr", password: "s3cret" };
    expect(isAuthorized(header("tdarr:s3cret"), expected)).toBe(true);
    expect(isAuthorized(header("tdarr:s3cret "), expected)).toBe(false);
    expect(isAuthorized(header("Tdarr:s3cret"), expected)).toBe(false);
    expect(isAuthorized(undefined, expected)).toBe(false);
  });
});
