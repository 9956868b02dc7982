import { createHash, randomBytes, verify } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { applyFields, parseFields } from "./fake-google-fields.ts";
import { createDriveModel, USER, type DriveModel } from "./fake-google-drive.ts";

/**
 * A local Google for tests: the OAuth endpoints (authorization page that "consents" and redirects, token endpoint
 * for authorization_code, refresh_token and the service-account JWT grant) and the Drive v3 calls autoscan makes,
 * with the shapes, statuses and quirks of ../shared/reference/integrations.md §1–§2. Reached through the real
 * client libraries: `google.drive({rootUrl})` and `new OAuth2Client({endpoints})`.
 */
export type Route = "auth" | "token" | "startPageToken" | "changes" | "files.get" | "drives.list" | "drives.get";

export interface Fault {
  readonly status: number;
  /** Drive `errors[0].reason` (e.g. `userRateLimitExceeded`), or the OAuth `error` for the token route. */
  readonly reason?: string;
  readonly retryAfter?: string;
}

interface Client {
  readonly secret: string;
  readonly type: "desktop" | "web";
}

interface AuthCode {
  readonly clientId: string;
  readonly redirectUri: string;
  readonly scope: string;
  readonly challenge?: string;
  readonly offline: boolean;
  used: boolean;
}

interface Grant {
  readonly clientId: string;
  readonly scope: string;
  revoked: boolean;
}

interface AccessToken {
  readonly principal: string;
  readonly scope: string;
  readonly expiresAt: number;
}

const TOKEN_AUD = "https://oauth2.googleapis.com/token";
const READ_SCOPES = ["drive", "drive.readonly", "drive.metadata.readonly", "drive.metadata", "drive.file", "drive.appdata"];
const DRIVES_SCOPES = ["drive", "drive.readonly"];

export interface FakeGoogle {
  readonly url: string;
  readonly tokenUrl: string;
  readonly authUrl: string;
  readonly drive: DriveModel;
  readonly calls: Record<Route, number>;
  readonly requests: { route: Route; query: URLSearchParams }[];
  /** Registers an OAuth client. */
  addClient(id: string, secret: string, type?: "desktop" | "web"): void;
  addServiceAccount(email: string, publicKeyPem: string): void;
  /** A refresh token as if the user had consented earlier (for rclone.conf fixtures and stored tokens). */
  issueRefreshToken(clientId: string, scope: string): string;
  /** The user revoked autoscan's access: every refresh token and access token stops working. */
  revokeAll(): void;
  /**
   * Google drops the access tokens issued so far before their expiry (a password change, a security event, a token
   * revoked by hand): the client still believes them valid, the Drive API answers 401, and a refresh gets a new one.
   * Returns how many were dropped.
   */
  revokeAccessTokens(): number;
  /** A service account key deleted in Cloud Console: its JWT grants fail with 400 invalid_grant from now on. */
  revokeServiceAccountKey(email: string): void;
  /** Access tokens issued so far (code, refresh and JWT grants). */
  readonly issuedAccessTokens: number;
  /** The scope the consent screen grants (default: what was asked). */
  grantScope: string | undefined;
  consent: "allow" | "deny";
  accessTokenLifetimeSec: number;
  readonly lastAuthRequest: URLSearchParams | undefined;
  failNext(route: Route, fault: Fault, times?: number): void;
  /**
   * Google does not answer: connections are accepted and every request (any path) is left without a reply, as
   * behind a route or proxy that drops the traffic. `held` counts the requests left waiting so far.
   */
  silent: boolean;
  readonly held: number;
  resetCalls(): void;
  apiCalls(): number;
  close(): Promise<void>;
}

export async function startFakeGoogle(): Promise<FakeGoogle> {
  const drive = createDriveModel();
  const clients = new Map<string, Client>();
  const serviceAccounts = new Map<string, string>();
  const codes = new Map<string, AuthCode>();
  const grants = new Map<string, Grant>();
  const tokens = new Map<string, AccessToken>();
  const faults: { route: Route; fault: Fault; times: number }[] = [];
  const calls: Record<Route, number> = { auth: 0, token: 0, startPageToken: 0, changes: 0, "files.get": 0, "drives.list": 0, "drives.get": 0 };
  const requests: { route: Route; query: URLSearchParams }[] = [];
  let lastAuthRequest: URLSearchParams | undefined;
  let issued = 0;
  let held = 0;

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      res.writeHead(500, { "content-type": "application/json" }).end(JSON.stringify({ error: String(error) }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;

  const fake: FakeGoogle = {
    url,
    tokenUrl: `${url}token`,
    authUrl: `${url}o/oauth2/v2/auth`,
    drive,
    calls,
    requests,
    grantScope: undefined,
    consent: "allow",
    accessTokenLifetimeSec: 3599,
    get lastAuthRequest() {
      return lastAuthRequest;
    },
    addClient: (id, secret, type = "desktop") => void clients.set(id, { secret, type }),
    addServiceAccount: (email, pem) => void serviceAccounts.set(email, pem),
    issueRefreshToken(clientId, scope) {
      const refresh = `1//${randomBytes(24).toString("base64url")}`;
      grants.set(refresh, { clientId, scope, revoked: false });
      return refresh;
    },
    revokeAll() {
      for (const grant of grants.values()) grant.revoked = true;
      tokens.clear();
    },
    revokeAccessTokens() {
      const dropped = tokens.size;
      tokens.clear();
      return dropped;
    },
    revokeServiceAccountKey: (email) => void serviceAccounts.delete(email),
    get issuedAccessTokens() {
      return issued;
    },
    failNext: (route, fault, times = 1) => void faults.push({ route, fault, times }),
    silent: false,
    get held() {
      return held;
    },
    resetCalls() {
      for (const key of Object.keys(calls) as Route[]) calls[key] = 0;
      requests.length = 0;
    },
    apiCalls: () => calls.startPageToken + calls.changes + calls["files.get"] + calls["drives.list"] + calls["drives.get"],
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return fake;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (fake.silent) {
      // No reply at all; close() ends the connection.
      held++;
      return;
    }
    const u = new URL(req.url ?? "/", url);
    const route = routeOf(req.method ?? "GET", u.pathname);
    if (!route) return json(res, 404, { error: { code: 404, message: `no route ${u.pathname}` } });
    calls[route]++;
    const query = u.searchParams;
    if (route !== "token") requests.push({ route, query });
    const fault = takeFault(route);
    if (fault) return sendFault(res, route, fault);
    if (route === "auth") return authorizePage(res, query);
    if (route === "token") return tokenEndpoint(req, res);
    const token = authenticate(req);
    if (!token) return apiError(res, 401, "authError", "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.", "UNAUTHENTICATED");
    const need = route.startsWith("drives") ? DRIVES_SCOPES : READ_SCOPES;
    if (!token.scope.split(" ").some((s) => need.includes(s.replace("https://www.googleapis.com/auth/", "")))) {
      return apiError(res, 403, "insufficientPermissions", "Request had insufficient authentication scopes.", "PERMISSION_DENIED");
    }
    return driveRoute(res, route, u, token.principal);
  }

  function routeOf(method: string, path: string): Route | undefined {
    if (method === "GET" && path === "/o/oauth2/v2/auth") return "auth";
    if (method === "POST" && path === "/token") return "token";
    if (method !== "GET") return undefined;
    if (path === "/drive/v3/changes/startPageToken") return "startPageToken";
    if (path === "/drive/v3/changes") return "changes";
    if (path.startsWith("/drive/v3/files/")) return "files.get";
    if (path === "/drive/v3/drives") return "drives.list";
    if (path.startsWith("/drive/v3/drives/")) return "drives.get";
    return undefined;
  }

  function takeFault(route: Route): Fault | undefined {
    const index = faults.findIndex((f) => f.route === route);
    const entry = faults[index];
    if (!entry) return undefined;
    if (--entry.times <= 0) faults.splice(index, 1);
    return entry.fault;
  }

  function sendFault(res: ServerResponse, route: Route, fault: Fault): void {
    const headers: Record<string, string> = fault.retryAfter ? { "retry-after": fault.retryAfter } : {};
    if (route === "token") return json(res, fault.status, { error: fault.reason ?? "server_error", error_description: "injected" }, headers);
    const reason = fault.reason ?? (fault.status === 429 ? "rateLimitExceeded" : fault.status >= 500 ? "backendError" : "forbidden");
    const domain = /RateLimit/.test(reason) ? "usageLimits" : "global";
    const message = reason === "userRateLimitExceeded" ? "User Rate Limit Exceeded" : reason;
    const status = fault.status === 429 ? "RESOURCE_EXHAUSTED" : fault.status >= 500 ? "INTERNAL" : "PERMISSION_DENIED";
    json(res, fault.status, { error: { code: fault.status, message, errors: [{ message, domain, reason }], status } }, headers);
  }

  function authorizePage(res: ServerResponse, q: URLSearchParams): void {
    lastAuthRequest = q;
    const client = clients.get(q.get("client_id") ?? "");
    const redirect = q.get("redirect_uri") ?? "";
    if (!client) return html(res, 401, "Error 401: invalid_client");
    if (client.type === "web" && /^http:\/\/(127\.0\.0\.1|localhost|\[::1\])/.test(redirect)) return html(res, 400, "Error 400: redirect_uri_mismatch");
    const target = new URL(redirect);
    target.searchParams.set("state", q.get("state") ?? "");
    if (fake.consent === "deny") {
      target.searchParams.set("error", "access_denied");
    } else {
      const code = `4/0A${randomBytes(20).toString("base64url")}`;
      const scope = fake.grantScope ?? q.get("scope") ?? "";
      const challenge = q.get("code_challenge_method") === "S256" ? (q.get("code_challenge") ?? undefined) : undefined;
      codes.set(code, { clientId: q.get("client_id") ?? "", redirectUri: redirect, scope, challenge, offline: q.get("access_type") === "offline", used: false });
      target.searchParams.set("code", code);
      target.searchParams.set("scope", scope);
    }
    res.writeHead(302, { location: target.href }).end();
  }

  async function tokenEndpoint(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!(req.headers["content-type"] ?? "").startsWith("application/x-www-form-urlencoded")) {
      return oauthError(res, 400, "invalid_request", "Bad Request");
    }
    const form = new URLSearchParams(await readBody(req));
    const grant = form.get("grant_type");
    if (grant === "urn:ietf:params:oauth:grant-type:jwt-bearer") return jwtGrant(res, form.get("assertion") ?? "");
    const clientId = form.get("client_id") ?? "";
    const client = clients.get(clientId);
    if (!client || client.secret !== form.get("client_secret")) return oauthError(res, 401, "invalid_client", "Unauthorized");
    if (grant === "authorization_code") return codeGrant(res, form, clientId, client);
    if (grant === "refresh_token") return refreshGrant(res, form.get("refresh_token") ?? "", clientId);
    return oauthError(res, 400, "unsupported_grant_type", "Invalid grant_type: " + grant);
  }

  function codeGrant(res: ServerResponse, form: URLSearchParams, clientId: string, client: Client): void {
    const code = codes.get(form.get("code") ?? "");
    const redirect = form.get("redirect_uri") ?? "";
    if (client.type === "web") return oauthError(res, 400, "redirect_uri_mismatch", "Bad Request");
    if (!code || code.used || code.clientId !== clientId) return oauthError(res, 400, "invalid_grant", "Bad Request");
    code.used = true;
    if (code.redirectUri !== redirect) return oauthError(res, 400, "redirect_uri_mismatch", "Bad Request");
    if (code.challenge) {
      const verifier = form.get("code_verifier");
      if (!verifier) return oauthError(res, 400, "invalid_grant", "Missing code verifier.");
      if (createHash("sha256").update(verifier).digest("base64url") !== code.challenge) return oauthError(res, 400, "invalid_grant", "Invalid code verifier.");
    }
    const access = issueAccess(USER, code.scope);
    const refresh = code.offline ? fake.issueRefreshToken(clientId, code.scope) : undefined;
    json(res, 200, { access_token: access, expires_in: fake.accessTokenLifetimeSec, ...(refresh ? { refresh_token: refresh } : {}), scope: code.scope, token_type: "Bearer" });
  }

  function refreshGrant(res: ServerResponse, refresh: string, clientId: string): void {
    const grant = grants.get(refresh);
    if (!grant || grant.revoked) return oauthError(res, 400, "invalid_grant", "Token has been expired or revoked.");
    if (grant.clientId !== clientId) return oauthError(res, 401, "unauthorized_client", "Unauthorized");
    json(res, 200, { access_token: issueAccess(USER, grant.scope), expires_in: fake.accessTokenLifetimeSec, scope: grant.scope, token_type: "Bearer" });
  }

  function jwtGrant(res: ServerResponse, assertion: string): void {
    const [header, payload, signature] = assertion.split(".");
    if (!header || !payload || !signature) return oauthError(res, 400, "invalid_grant", "Invalid JWT.");
    const claims = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as Record<string, unknown>;
    const pem = serviceAccounts.get(String(claims.iss));
    if (!pem) return oauthError(res, 400, "invalid_grant", "Invalid JWT Signature.");
    const valid = verify("RSA-SHA256", Buffer.from(`${header}.${payload}`), pem, Buffer.from(signature, "base64url"));
    if (!valid) return oauthError(res, 400, "invalid_grant", "Invalid JWT Signature.");
    if (claims.aud !== TOKEN_AUD || Number(claims.exp) * 1000 < Date.now()) return oauthError(res, 400, "invalid_grant", "Invalid JWT: Token must be a short-lived token.");
    const scope = String(claims.scope ?? "");
    json(res, 200, { access_token: issueAccess(String(claims.iss), scope), expires_in: 3599, token_type: "Bearer" });
  }

  function issueAccess(principal: string, scope: string): string {
    const access = `ya29.${randomBytes(24).toString("base64url")}`;
    issued++;
    tokens.set(access, { principal, scope, expiresAt: Date.now() + fake.accessTokenLifetimeSec * 1000 });
    return access;
  }

  function authenticate(req: IncomingMessage): AccessToken | undefined {
    const header = req.headers.authorization ?? "";
    const token = tokens.get(header.replace(/^Bearer\s+/i, ""));
    return token && token.expiresAt > Date.now() ? token : undefined;
  }

  function driveRoute(res: ServerResponse, route: Route, u: URL, principal: string): void {
    const q = u.searchParams;
    const allDrives = q.get("supportsAllDrives") === "true";
    const fields = q.get("fields");
    const reply = (body: Record<string, unknown>): void => json(res, 200, fields ? applyFields(body, parseFields(fields)) : body);
    const driveId = q.get("driveId") ?? undefined;
    if (driveId && !allDrives && (route === "changes" || route === "startPageToken")) {
      return apiError(res, 403, "teamDrivesSupportRequired", "The attempted action requires shared drive support to be enabled.", "PERMISSION_DENIED");
    }
    if (driveId && !drive.visibleDrives(principal).some((d) => d.id === driveId)) {
      return apiError(res, 404, "notFound", `Shared drive not found: ${driveId}`, "NOT_FOUND");
    }
    if (route === "startPageToken") return reply({ kind: "drive#startPageToken", startPageToken: drive.startPageToken });
    if (route === "changes") return changes(res, q, principal, reply);
    if (route === "files.get") {
      const id = decodeURIComponent(u.pathname.slice("/drive/v3/files/".length));
      const file = drive.getFile(id, principal, allDrives);
      return file ? reply(file) : apiError(res, 404, "notFound", `File not found: ${id}.`, "NOT_FOUND");
    }
    const visible = drive.visibleDrives(principal).map((d) => ({ kind: "drive#drive", id: d.id, name: d.name, hidden: false }));
    if (route === "drives.get") {
      const id = decodeURIComponent(u.pathname.slice("/drive/v3/drives/".length));
      const found = visible.find((d) => d.id === id);
      return found ? reply(found) : apiError(res, 404, "notFound", `Shared drive not found: ${id}`, "NOT_FOUND");
    }
    const size = Math.min(Number(q.get("pageSize") ?? 10), 100);
    const start = Number(q.get("pageToken") ?? 0);
    const page = visible.slice(start, start + size);
    reply({ kind: "drive#driveList", ...(start + size < visible.length ? { nextPageToken: String(start + size) } : {}), drives: page });
  }

  function changes(res: ServerResponse, q: URLSearchParams, principal: string, reply: (body: Record<string, unknown>) => void): void {
    const pageToken = q.get("pageToken");
    if (!pageToken) return apiError(res, 400, "required", "Required parameter: pageToken", "INVALID_ARGUMENT");
    const pageSize = Number(q.get("pageSize") ?? 100);
    if (!(pageSize >= 1 && pageSize <= 1000)) return apiError(res, 400, "invalid", `Invalid value '${pageSize}'. Values must be within the range: [1, 1000]`, "INVALID_ARGUMENT");
    const result = drive.listChanges({
      start: Number(pageToken),
      pageSize,
      driveId: q.get("driveId") ?? undefined,
      allDrives: q.get("includeItemsFromAllDrives") === "true" && q.get("supportsAllDrives") === "true",
      includeRemoved: q.get("includeRemoved") !== "false",
      principal,
    });
    reply({
      kind: "drive#changeList",
      ...(result.next !== undefined ? { nextPageToken: String(result.next) } : { newStartPageToken: String(result.newStart) }),
      changes: result.changes,
    });
  }
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "application/json; charset=UTF-8", ...headers }).end(JSON.stringify(body));
}

function html(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { "content-type": "text/html; charset=utf-8" }).end(`<html><body><p>${text}</p></body></html>`);
}

function oauthError(res: ServerResponse, status: number, error: string, description: string): void {
  json(res, status, { error, error_description: description });
}

function apiError(res: ServerResponse, code: number, reason: string, message: string, status: string): void {
  const details = reason === "insufficientPermissions" ? [{ "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: "ACCESS_TOKEN_SCOPE_INSUFFICIENT", domain: "googleapis.com" }] : undefined;
  const headers: Record<string, string> = code === 401 ? { "www-authenticate": 'Bearer realm="https://accounts.google.com/"' } : {};
  json(res, code, { error: { code, message, errors: [{ message, domain: "global", reason }], status, ...(details ? { details } : {}) } }, headers);
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}
