import { describe, expect, it } from "vitest";
import { parsePastedAnswer } from "./pasted-answer.ts";

describe("what a person pastes at 'Enter authorization code:'", () => {
  it.each([
    ["the whole redirect URL", "http://127.0.0.1:53682/?state=S&code=4%2F0AfJ-x&scope=https%3A%2F%2Fwww.googleapis.com%2Fauth%2Fdrive", { code: "4/0AfJ-x" }],
    ["the URL in quotes with spaces", '  "http://127.0.0.1:53682/?state=S&code=4%2F0A"  ', { code: "4/0A" }],
    ["only the query string", "state=S&code=4%2F0A", { code: "4/0A" }],
    ["the bare code", "4/0AfJ-x", { code: "4/0AfJ-x" }],
    ["the bare code, percent-encoded", "4%2F0AfJ-x", { code: "4/0AfJ-x" }],
    ["a denial", "http://127.0.0.1:53682/?error=access_denied&state=S", { error: "access_denied", description: undefined }],
  ])("%s", (_, text, expected) => {
    expect(parsePastedAnswer(text, "S")).toEqual(expected);
  });

  it.each([
    ["nothing", "", /Nothing was entered/],
    ["another attempt's URL", "http://127.0.0.1:53682/?state=OTHER&code=4%2F0A", /another authorization attempt/],
    ["a URL without a code", "http://127.0.0.1:53682/?state=S", /no code= parameter/],
    ["a word", "yes", /neither an authorization code .* nor the address/],
    ["a sentence", "I allowed it", /neither an authorization code/],
    ["the client secret", "GOCSPX-abcdefghijklmnop", /neither an authorization code/],
    ["a refresh token", "1//0gAbCdEf-ghijk", /neither an authorization code/],
    ["an access token", "ya29.a0AfB_byC", /neither an authorization code/],
    ["a code with a space in it", "4/0AfJ x", /neither an authorization code/],
  ])("refuses %s", (_, text, problem) => {
    const answer = parsePastedAnswer(text, "S");
    expect("problem" in answer && answer.problem).toMatch(problem);
  });
});
