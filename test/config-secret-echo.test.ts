import { describe, expect, it } from "vitest";
import { parseConfigText } from "../src/config/load.ts";
import { ConfigError } from "../src/core/errors.ts";

/**
 * A config problem names the key and the shape it expects, never a value that may be a secret: the lines reach the
 * terminal, `docker logs` and bug reports. Here the mistakes a user makes with the sections of named entries (a
 * string where an entry's object belongs: the webhook URL, the API key or the token pasted straight in), from the file
 * and from the environment, and secret-named keys anywhere.
 */
const PASS = "0123456789abcdef0123";
const DISCORD_TOKEN = "Qw7Zr2Lk9Xv4Tn6Bm1Hc8Ys3Jd5Pf0Ga-uE_iO7pKx2VbN4mLq9ZwR1tY6sC3hD8jFgA";
const WEBHOOK = `https://discord.com/api/webhooks/112233445566778899/${DISCORD_TOKEN}`;
const API_KEY = "5f2b9c0d1e3a4f6b8c7d9e0f1a2b3c4d";
const PLEX_TOKEN = "xYz9AbC3dEf7GhI1jKl5";

function problemsOf(raw: Record<string, unknown>, env: Record<string, string> = {}): readonly string[] {
  try {
    parseConfigText(JSON.stringify(raw), "/srv/autoscan/config.json", env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).problems;
  }
  throw new Error("the config was accepted");
}

/** Every piece of `secret` of `size` characters that shows in `text`. */
function pieces(text: string, secret: string, size = 6): string[] {
  const found = new Set<string>();
  for (let start = 0; start + size <= secret.length; start++) if (text.includes(secret.slice(start, start + size))) found.add(secret.slice(start, start + size));
  return [...found];
}

describe("config problems never echo a secret", () => {
  it("a string where NOTIFY.<name>, ARR.<name> or TARGETS.<name> belongs: the key and the expected object, no value", () => {
    const problems = problemsOf({ SERVER_PASS: PASS, NOTIFY: { discord: WEBHOOK }, ARR: { sonarr: API_KEY }, TARGETS: { plex2: PLEX_TOKEN } });
    const text = problems.join("\n");
    for (const secret of [DISCORD_TOKEN, API_KEY, PLEX_TOKEN]) expect(pieces(text, secret)).toEqual([]);
    expect(text).not.toContain("112233445566778899");
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^NOTIFY\.discord: expected an object such as .*found a string \(value hidden\)\.$/),
        expect.stringMatching(/^ARR\.sonarr: expected an object such as .*found a string \(value hidden\)\.$/),
        expect.stringMatching(/^TARGETS\.plex2: expected an object such as .*found a string \(value hidden\)\.$/),
      ]),
    );
  });

  it("the same through the environment", () => {
    const problems = problemsOf({ SERVER_PASS: PASS }, { NOTIFY: JSON.stringify({ discord: WEBHOOK }), ARR: JSON.stringify({ sonarr: { TYPE: "sonarr", URL: 5, API_KEY: 12345678901234 } }) });
    const text = problems.join("\n");
    expect(pieces(text, DISCORD_TOKEN)).toEqual([]);
    expect(text).not.toContain("112233445566778899");
    expect(text).not.toContain("12345678901234");
    expect(text).toContain("(from environment variable NOTIFY)");
  });

  it("any value under NOTIFY, ARR or TARGETS, and any key named like a secret, is described by its type alone", () => {
    const problems = problemsOf({
      SERVER_PASS: PASS,
      NOTIFY: { hook: { TYPE: "webhook", URL: ["https://ha.example.org/api/webhook/Zk3p9QvB"] } },
      TARGETS: { jf: { TYPE: "jellyfin", URL: "http://jf:8096", TOKEN: "short1", PASSWORD: 12345 } },
      ARR: { radarr: { TYPE: "radarr", URL: "http://radarr:7878", API_KEY: ["k9k9k9k9"] } },
    });
    const text = problems.join("\n");
    for (const secret of ["Zk3p9QvB", "12345", "k9k9k9k9"]) expect(text).not.toContain(secret);
  });
});
