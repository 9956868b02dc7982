import { randomBytes } from "node:crypto";
import { createInterface } from "node:readline";
import { CodeChallengeMethod, OAuth2Client, type Credentials } from "google-auth-library";
import type { GoogleEndpoints } from "./credentials.ts";
import { classifyGoogleError, explainOAuthError, type OAuthErrorCode } from "./google-errors.ts";
import { describeUnreachable } from "./google-unreachable.ts";
import { startLoopbackReceiver, type RedirectResult } from "./loopback-receiver.ts";
import { parsePastedAnswer } from "./pasted-answer.ts";
import { checkGrantedScope, type ScopeNeeds, requiredScope } from "./scope.ts";
import type { TokenStore } from "./token-store.ts";

/**
 * `autoscan authorize`: Google's loopback flow for installed apps, which replaced the out-of-band flow Google
 * withdrew in 2022 (docs: ../shared/reference/integrations.md §2.2). PKCE (S256) and `state` protect the code;
 * `access_type=offline` and `prompt=consent` make Google return a refresh token every time. The user may paste the
 * code or the whole redirect URL; when the browser can reach our loopback port we catch the redirect ourselves.
 * Everything it says is plain text for the person at the terminal (`output`), not log lines.
 *
 * Google is asked once before the link is shown (is its token endpoint reachable from here?), so a container without
 * DNS fails in seconds instead of after the person went through the consent screen. Every request to Google is tried
 * once, bounded by `timeoutMs` and stopped by `signal`: google-auth-library's default retries a failed POST three
 * times without a timeout (about 26 s for a DNS failure, forever for a dead route, deaf to Ctrl-C), and an
 * authorization code works once anyway, so a retried exchange could only fail.
 */
export interface AuthorizeOptions {
  readonly clientId: string;
  readonly clientSecret: string;
  readonly scopeNeeds: ScopeNeeds;
  readonly tokenStore: TokenStore;
  /** Where the instructions, the prompt and the outcome go (stderr): plain text for a person. */
  readonly output: { write(text: string): unknown };
  readonly input: NodeJS.ReadableStream;
  /** Loopback port; rclone uses 53682 too, so `ssh -L 53682:127.0.0.1:53682` works for both. 0 = any. */
  readonly port?: number;
  /**
   * Whether to say that a browser reaching the loopback port makes pasting unnecessary. False inside a container:
   * the receiver listens on the container's own 127.0.0.1, which no browser and no `ssh -L` to the host reaches.
   */
  readonly loopbackHint?: boolean;
  readonly endpoints?: GoogleEndpoints;
  readonly onSecret?: (value: string) => void;
  /** Ctrl-C: stops the wait for the person or for Google at once. */
  readonly signal?: AbortSignal;
  /** How long each request to Google may take (default `GOOGLE_TIMEOUT_MS`). */
  readonly timeoutMs?: number;
}

export type AuthorizeResult =
  | { readonly ok: true; readonly path: string }
  | { readonly ok: false; readonly message: string }
  /** The signal aborted (Ctrl-C) while waiting for the person or for Google: nothing was saved. */
  | { readonly ok: false; readonly interrupted: true };

export const DEFAULT_LOOPBACK_PORT = 53682;
/** Google's token endpoint answers in well under a second; a few seconds more cover a slow link. */
export const GOOGLE_TIMEOUT_MS = 5_000;
export const PROMPT = "Enter authorization code: ";

export async function runAuthorize(options: AuthorizeOptions): Promise<AuthorizeResult> {
  const scope = requiredScope(options.scopeNeeds);
  const timeoutMs = options.timeoutMs ?? GOOGLE_TIMEOUT_MS;
  const client = new OAuth2Client({
    clientId: options.clientId,
    clientSecret: options.clientSecret,
    endpoints: {
      ...(options.endpoints?.tokenUrl ? { oauth2TokenUrl: options.endpoints.tokenUrl } : {}),
      ...(options.endpoints?.authUrl ? { oauth2AuthBaseUrl: options.endpoints.authUrl } : {}),
    },
    // Defaults for every request the client makes: one try, bounded, stopped by Ctrl-C (see above).
    transporterOptions: {
      timeout: timeoutMs,
      retryConfig: { retry: 0, noResponseRetries: 0 },
      ...(options.signal ? { signal: options.signal } : {}),
    },
  });
  const unreachable = await checkReachable(client, timeoutMs, options.signal);
  if (unreachable) return unreachable;
  const { codeVerifier, codeChallenge } = await client.generateCodeVerifierAsync();
  const state = randomBytes(24).toString("base64url");
  const receiver = await startLoopbackReceiver({ port: options.port ?? DEFAULT_LOOPBACK_PORT, state });
  const redirectUri = `http://127.0.0.1:${receiver.port}/`;
  try {
    const url = client.generateAuthUrl({
      access_type: "offline",
      prompt: "consent",
      scope,
      state,
      redirect_uri: redirectUri,
      code_challenge: codeChallenge,
      code_challenge_method: CodeChallengeMethod.S256,
    });
    options.output.write(instructions(url, receiver.port, options.loopbackHint ?? true));
    const answer = await waitForAnswer(options, receiver.received, state);
    if ("interrupted" in answer) return { ok: false, interrupted: true };
    if ("problem" in answer) return { ok: false, message: answer.problem };
    if ("error" in answer) return { ok: false, message: explainRedirectError(answer) };
    return await exchange(client, answer.code, codeVerifier, redirectUri, scope, options);
  } finally {
    await receiver.close();
  }
}

function instructions(url: string, port: number, loopbackHint: boolean): string {
  return [
    "Open this link in a browser and allow access:",
    "",
    `  ${url}`,
    "",
    `Your browser then goes to http://127.0.0.1:${port}/… and that page may fail to load; that is expected.`,
    "Copy the whole address from the address bar (or just its code) and paste it here.",
    ...(loopbackHint
      ? [`(When the browser runs on this machine, or you forward the port with ssh -L ${port}:127.0.0.1:${port} <this server>, autoscan catches the answer by itself.)`]
      : []),
    "",
    "",
  ].join("\n");
}

async function exchange(
  client: OAuth2Client,
  code: string,
  codeVerifier: string,
  redirectUri: string,
  scope: string,
  options: AuthorizeOptions,
): Promise<AuthorizeResult> {
  const say = (text: string): unknown => options.output.write(`${text}\n`);
  say(`Requesting access token for auth code ${code.slice(0, 8)}…`);
  let tokens: Credentials;
  try {
    tokens = (await client.getToken({ code, codeVerifier, redirect_uri: redirectUri })).tokens;
  } catch (error) {
    if (options.signal?.aborted) return { ok: false, interrupted: true };
    const unreachable = describeUnreachable(error, client.endpoints.oauth2TokenUrl.toString(), options.timeoutMs ?? GOOGLE_TIMEOUT_MS);
    if (unreachable) return { ok: false, message: unreachable };
    const failure = classifyGoogleError(error);
    const message =
      failure.kind === "auth" ? explainOAuthError(failure.code, "exchange") : `Failed exchanging authorization code for an Access Token: ${failure.detail}`;
    return { ok: false, message };
  }
  for (const secret of [tokens.access_token, tokens.refresh_token]) if (secret) options.onSecret?.(secret);
  // plex_autoscan's two lines, word for word: its guides tell people to wait for them.
  say("Retrieved first access token!");
  if (!tokens.refresh_token) {
    return { ok: false, message: "Google returned no refresh token. Remove autoscan's access at https://myaccount.google.com/permissions and run `autoscan authorize` again." };
  }
  const granted = tokens.scope ?? scope;
  await options.tokenStore.save({
    clientId: options.clientId,
    refreshToken: tokens.refresh_token,
    accessToken: tokens.access_token ?? undefined,
    expiryDate: tokens.expiry_date ?? undefined,
    scope: granted,
    tokenType: tokens.token_type ?? undefined,
  });
  say("Access tokens were successfully retrieved!");
  say(`Saved to ${options.tokenStore.path} (readable by autoscan's user only).`);
  const check = checkGrantedScope(granted, options.scopeNeeds);
  if (!check.ok) say(`Warning: access was granted, but ${check.reason}. Run 'autoscan authorize' again and tick every box on the consent screen.`);
  say("Restart autoscan to start Google Drive monitoring (docker restart autoscan; with systemd: sudo systemctl restart autoscan).");
  return { ok: true, path: options.tokenStore.path };
}

/**
 * One request to the token endpoint, before the link is shown: any HTTP answer (Google answers a GET there with an
 * error status) proves DNS, the route, TLS and the proxy work from here. Goes through the client's own transport, so
 * a proxy the exchange would use is used here too.
 */
async function checkReachable(
  client: OAuth2Client,
  timeoutMs: number,
  signal: AbortSignal | undefined,
): Promise<Extract<AuthorizeResult, { ok: false }> | undefined> {
  const url = client.endpoints.oauth2TokenUrl.toString();
  try {
    await client.transporter.request({ url, method: "GET", responseType: "text", validateStatus: () => true });
    return undefined;
  } catch (error) {
    if (signal?.aborted) return { ok: false, interrupted: true };
    return { ok: false, message: describeUnreachable(error, url, timeoutMs) ?? `Cannot reach Google at ${url}: ${String((error as Error).message ?? error)}` };
  }
}

/** Reads pasted answers (re-prompting after a bad one) until a usable one arrives or the redirect is caught. */
async function waitForAnswer(
  options: AuthorizeOptions,
  redirect: Promise<RedirectResult>,
  state: string,
): Promise<RedirectResult | { problem: string } | { interrupted: true }> {
  const lines = createInterface({ input: options.input, terminal: false });
  const iterator = lines[Symbol.asyncIterator]();
  const aborted = new Promise<{ interrupted: true }>((resolve) => {
    if (options.signal?.aborted) resolve({ interrupted: true });
    options.signal?.addEventListener("abort", () => resolve({ interrupted: true }), { once: true });
  });
  const caught = redirect.then((result) => ({ result }));
  try {
    for (;;) {
      options.output.write(PROMPT);
      const next = await Promise.race([iterator.next().then((line) => ({ line })), caught, aborted]);
      if ("interrupted" in next) {
        // End the line the prompt left open (the terminal shows ^C there); the caller says the rest.
        options.output.write("\n");
        return next;
      }
      if ("result" in next) {
        options.output.write("\nReceived the answer from the browser redirect.\n");
        return next.result;
      }
      if (next.line.done) return { problem: "No authorization code was entered." };
      const answer = parsePastedAnswer(next.line.value, state);
      if (!("problem" in answer)) return answer;
      // Refused here, not sent to Google; the person tries again.
      options.output.write(`${answer.problem}\n`);
    }
  } finally {
    lines.close();
  }
}

function explainRedirectError(answer: { error: string; description?: string }): string {
  const known: readonly string[] = ["access_denied", "redirect_uri_mismatch", "invalid_client", "unauthorized_client"];
  if (known.includes(answer.error)) return explainOAuthError(answer.error as OAuthErrorCode, "exchange");
  return `Google answered ${answer.error}${answer.description ? `: ${answer.description}` : ""}.`;
}
