import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import type { FakeApp } from "./app-facts.ts";
import { JSON_TYPE, type Reply } from "./replies.ts";
import type { FakeArrType, FakeNotification, FakeNotificationInput, FakeNotificationTest } from "./types.ts";

/*
 * The apps' connections ("notifications") and health list, as their source has them. Read in the snapshots of
 * ../shared/reference/arr-history.md (Sonarr `develop` 2026-06-25 and tag v3.0.9.1549, Radarr `develop`
 * 2025-11-14, Lidarr `develop` 2025-10-05, Readarr `develop` 2024-03-28). `S` = Sonarr, `R` = Radarr, `L` = Lidarr,
 * `RD` = Readarr; paths are relative to each repository. "(by reading)": from the code, not seen at run time.
 *
 * Routes: the provider controller, `src/Sonarr.Api.V3/ProviderControllerBase.cs` (R: `src/Radarr.Api.V3/`, L:
 * `src/Lidarr.Api.V1/`, RD: `src/Readarr.Api.V1/`; S v3: `ProviderModuleBase.cs`, Nancy), mounted by
 * `Notifications/NotificationController.cs` as `notification` under `/api/v3` (S, R) or `/api/v1` (L, RD):
 * - `GET …/notification`: every connection, ordered by name;
 * - `GET …/notification/{id}`; `DELETE …/notification/{id}` (answers `{}`);
 * - `POST …/notification`: 201 with the saved resource. When the new connection is enabled its settings are
 *   validated and the connection is tested (the app sends its Test event) before it is saved; a failure is refused;
 *   `?forceSave=true` only drops warnings (not in S v3);
 * - `PUT …/notification/{id}` (`{id:int?}`: the body's id when the route has none): 202 with the saved resource;
 *   tested first when enabled and changed (RD, S v3: whenever enabled), unless `?forceSave=true`; 404 for an id
 *   that does not exist;
 * - `GET …/notification/schema`: one blank resource per kind of connection (`implementation` `Webhook` …, `name` "",
 *   the settings' defaults, every event off, `presets`);
 * - `POST …/notification/test`: validates the settings and runs the test; 200 with the text `{}`. For a saved
 *   connection (an `id`), a passed test records a success (`NotificationFactory.Test` → `RecordSuccess`: the hold
 *   after failures ends) and a failed one a failure (by reading).
 * - Refusals: a `ValidationException` is 400 with the failures `[{propertyName, errorMessage, severity, isWarning …}]`
 *   (`src/Sonarr.Http/ErrorManagement/SonarrErrorPipeline.cs`); the shared rules (`ProviderControllerBase`) are
 *   `Name` not empty, `Name` unique in any case ("Should be unique"), `Implementation` and `ConfigContract` not
 *   empty, and on POST `Fields` not null.
 *
 * The resource (`ProviderResource.cs` + `Notifications/NotificationResource.cs`): `id`, `name`, `fields`
 * (`[{order, name, label, helpText, value, type, advanced, selectOptions, privacy, isFloat}]`,
 * `Sonarr.Http/ClientSchema/Field.cs`, `SchemaBuilder.cs`), `implementationName`, `implementation`,
 * `configContract`, `infoLink`, `tags`, and the events with their `supportsOn…`. Nulls are left out (STJson
 * `WhenWritingNull`); a set password reads back as `********`, and `********` sent back keeps the stored one
 * (`SchemaBuilder.ToSchema`/`ReadFromSchema`). Fields the settings do not have are ignored; settings not sent keep
 * their defaults.
 *
 * `WebhookSettings` (`src/NzbDrone.Core/Notifications/Webhook/WebhookSettings.cs`, `WebhookMethod.cs`): `url`,
 * `method` (`POST` = 1, the default; `PUT` = 2), `username`, `password`, and `headers` (a key/value list) in S v4,
 * R and L (not RD, not S v3). Its validator: the URL must be valid ("Invalid Url: '…'"; the fake's test of validity
 * is an approximation). The test sends the Test event to the URL (`WebhookBase.BuildTestPayload`: the Grab shape,
 * the item's path `C:\testpath`); an HTTP error answer is a failure "Unable to post to webhook: HTTP request failed:
 * [404:NotFound] [POST] at [<url>]" (`WebhookProxy.cs`, `NzbDrone.Common/Http/HttpException.cs`), prefixed
 * "Unable to send test message: " in S v4 and R; a delivery that cannot connect is not caught there: the call
 * answers 500 `{message, description}` ("Connection refused (host:port)", .NET's words; by reading).
 *
 * The events, and "enabled": there is no enable switch; `NotificationDefinition.Enable` is true when any of these is
 * (`src/NzbDrone.Core/Notifications/NotificationDefinition.cs`), and the UI labels a connection with none "Disabled":
 * - S v4: onGrab, onDownload ("On File Import"), onUpgrade ("On File Upgrade"), onImportComplete, onRename,
 *   onSeriesAdd, onSeriesDelete, onEpisodeFileDelete, onEpisodeFileDeleteForUpgrade, onHealthIssue,
 *   onHealthRestored, onApplicationUpdate, onManualInteractionRequired (+ includeHealthWarnings, not an event);
 * - S v3: onGrab, onDownload, onUpgrade, onRename, onSeriesDelete, onEpisodeFileDelete,
 *   onEpisodeFileDeleteForUpgrade, onHealthIssue, onApplicationUpdate (its Enable leaves out onRename);
 * - R: onGrab, onDownload, onUpgrade, onRename, onMovieAdded, onMovieDelete, onMovieFileDelete,
 *   onMovieFileDeleteForUpgrade, onHealthIssue, onHealthRestored, onApplicationUpdate, onManualInteractionRequired;
 * - L: onGrab, onReleaseImport, onUpgrade, onRename, onArtistAdd, onArtistDelete, onAlbumDelete, onHealthIssue,
 *   onHealthRestored, onDownloadFailure, onImportFailure, onTrackRetag, onApplicationUpdate (no file delete event);
 * - RD: onGrab, onReleaseImport, onUpgrade, onRename, onAuthorAdded, onAuthorDelete, onBookDelete,
 *   onBookFileDelete, onBookFileDeleteForUpgrade, onHealthIssue, onDownloadFailure, onImportFailure, onBookRetag,
 *   onApplicationUpdate (its Enable leaves out onRename).
 *
 * Health: `GET …/health` → `[{source, type, message, wikiUrl}]` (`Health/HealthResource.cs`; `source` the check's
 * class name, `type` `ok|notice|warning|error`). `NotificationStatusCheck` (S v4 since 2023-08, R, L, RD; not in
 * S v3) lists the valid connections the app holds back after failed deliveries: a warning "Notifications
 * unavailable due to failures: <names, comma-separated>", or, when every one is held back, an error "All
 * notifications are unavailable due to failures"; `wikiUrl` `https://wiki.servarr.com/<app>/system#notifications-
 * are-unavailable-due-to-failures` (`src/NzbDrone.Core/HealthCheck/Checks/NotificationStatusCheck.cs`, the strings
 * in `Localization/Core/en.json`). The fake holds a connection back with `setNotificationFailing`.
 *
 * Not modelled: the escalating back-off itself (`ProviderStatusServiceBase.cs`: the app holds a connection back for
 * a growing time after each failure), the bulk routes, `testall`, `action/{name}`, other kinds of connection than
 * Webhook through the API (seeds may be of any kind), and the test delivery's 100 s timeout (the fake's is 5 s).
 */

const EVENTS: Readonly<Record<FakeArrType | "sonarr3", readonly string[]>> = {
  sonarr: [
    "onGrab",
    "onDownload",
    "onUpgrade",
    "onImportComplete",
    "onRename",
    "onSeriesAdd",
    "onSeriesDelete",
    "onEpisodeFileDelete",
    "onEpisodeFileDeleteForUpgrade",
    "onHealthIssue",
    "onHealthRestored",
    "onApplicationUpdate",
    "onManualInteractionRequired",
  ],
  sonarr3: [
    "onGrab",
    "onDownload",
    "onUpgrade",
    "onRename",
    "onSeriesDelete",
    "onEpisodeFileDelete",
    "onEpisodeFileDeleteForUpgrade",
    "onHealthIssue",
    "onApplicationUpdate",
  ],
  radarr: [
    "onGrab",
    "onDownload",
    "onUpgrade",
    "onRename",
    "onMovieAdded",
    "onMovieDelete",
    "onMovieFileDelete",
    "onMovieFileDeleteForUpgrade",
    "onHealthIssue",
    "onHealthRestored",
    "onApplicationUpdate",
    "onManualInteractionRequired",
  ],
  lidarr: [
    "onGrab",
    "onReleaseImport",
    "onUpgrade",
    "onRename",
    "onArtistAdd",
    "onArtistDelete",
    "onAlbumDelete",
    "onHealthIssue",
    "onHealthRestored",
    "onDownloadFailure",
    "onImportFailure",
    "onTrackRetag",
    "onApplicationUpdate",
  ],
  readarr: [
    "onGrab",
    "onReleaseImport",
    "onUpgrade",
    "onRename",
    "onAuthorAdded",
    "onAuthorDelete",
    "onBookDelete",
    "onBookFileDelete",
    "onBookFileDeleteForUpgrade",
    "onHealthIssue",
    "onDownloadFailure",
    "onImportFailure",
    "onBookRetag",
    "onApplicationUpdate",
  ],
};

/** The events `Enable` leaves out (S v3 and RD: onRename). */
const NOT_IN_ENABLE: Readonly<Record<FakeArrType | "sonarr3", readonly string[]>> = {
  sonarr: [],
  sonarr3: ["onRename"],
  radarr: [],
  lidarr: [],
  readarr: ["onRename"],
};

const PRIVATE_VALUE = "********";

interface Settings {
  url: string | null;
  method: number;
  username: string | null;
  password: string | null;
  headers: { key: string; value: string }[];
}

interface Definition {
  id: number;
  name: string;
  implementation: string;
  configContract: string;
  settings: Settings;
  events: Record<string, boolean>;
  includeHealthWarnings: boolean;
  tags: number[];
}

export interface NotificationStore {
  list(): Reply;
  get(id: number): Reply;
  schema(): Reply;
  /** `?forceSave=true` only drops warnings at a create, and the fake gives none: it takes no query. */
  create(body: string): Promise<Reply>;
  update(id: number | undefined, body: string, query: URLSearchParams): Promise<Reply>;
  remove(id: number): Reply;
  test(body: string): Promise<Reply>;
  health(): Reply;
  seed(input: FakeNotificationInput): number;
  setFailing(id: number, failing: boolean): void;
  addHealth(entry: { source: string; type: string; message: string }): void;
  snapshot(): FakeNotification[];
  readonly tests: FakeNotificationTest[];
}

export function createNotificationStore(app: FakeApp): NotificationStore {
  const kind = app.v3 ? "sonarr3" : app.type;
  const events = EVENTS[kind];
  const hasHeaders = !(app.v3 || app.type === "readarr");
  const definitions = new Map<number, Definition>();
  const failing = new Set<number>();
  const extraHealth: { source: string; type: string; message: string }[] = [];
  const tests: FakeNotificationTest[] = [];
  let nextId = 1;

  const enabled = (definition: Definition): boolean =>
    events.some((event) => definition.events[event] === true && !NOT_IN_ENABLE[kind].includes(event));

  function blankDefinition(): Definition {
    return {
      id: 0,
      name: "",
      implementation: "Webhook",
      configContract: "WebhookSettings",
      settings: { url: null, method: 1, username: null, password: null, headers: [] },
      events: Object.fromEntries(events.map((event) => [event, false])),
      includeHealthWarnings: false,
      tags: [],
    };
  }

  function fields(settings: Settings): Record<string, unknown>[] {
    const out: Record<string, unknown>[] = [
      { order: 0, name: "url", label: app.v3 || app.type === "lidarr" || app.type === "readarr" ? "URL" : "Webhook URL", value: settings.url, type: "url", advanced: false, privacy: "normal", isFloat: false },
      {
        order: 1,
        name: "method",
        label: "Method",
        helpText: "Which HTTP method to use submit to the Webservice",
        value: settings.method,
        type: "select",
        advanced: false,
        selectOptions: [
          { value: 1, name: "POST", order: 1, dividerAfter: false },
          { value: 2, name: "PUT", order: 2, dividerAfter: false },
        ],
        privacy: "normal",
        isFloat: false,
      },
      { order: 2, name: "username", label: "Username", value: settings.username, type: "textbox", advanced: false, privacy: "userName", isFloat: false },
      {
        order: 3,
        name: "password",
        label: "Password",
        value: settings.password ? PRIVATE_VALUE : settings.password,
        type: "password",
        advanced: false,
        privacy: "password",
        isFloat: false,
      },
    ];
    if (hasHeaders) out.push({ order: 4, name: "headers", label: "Headers", value: settings.headers, type: "keyValueList", advanced: true, privacy: "normal", isFloat: false });
    // Nulls are left out (STJson WhenWritingNull): a template's url, an unset username.
    return out.map((field) => Object.fromEntries(Object.entries(field).filter(([, value]) => value !== null && value !== undefined)));
  }

  function toResource(definition: Definition, template = false): Record<string, unknown> {
    const resource: Record<string, unknown> = {};
    for (const event of events) resource[event] = definition.events[event] === true;
    resource.includeHealthWarnings = definition.includeHealthWarnings;
    for (const event of events) resource[`supportsO${event.slice(1)}`] = definition.implementation === "Webhook";
    if (definition.id !== 0) resource.id = definition.id;
    resource.name = definition.name;
    resource.fields = definition.implementation === "Webhook" ? fields(definition.settings) : [];
    resource.implementationName = definition.implementation;
    resource.implementation = definition.implementation;
    resource.configContract = definition.configContract;
    resource.infoLink = `https://wiki.servarr.com/${app.type}/supported#${definition.implementation.toLowerCase()}`;
    resource.tags = [...definition.tags];
    if (template) resource.presets = [];
    return resource;
  }

  const json = (status: number, body: unknown): Reply => ({ status, contentType: JSON_TYPE, body: JSON.stringify(body) });
  const failures = (list: { propertyName: string; errorMessage: string; attemptedValue?: unknown }[]): Reply =>
    json(
      400,
      list.map((failure) => ({ ...failure, severity: "error", isWarning: false })),
    );

  /** `ProviderResourceMapper.ToModel` + `SchemaBuilder.ReadFromSchema`: the body onto a definition. */
  function toModel(body: unknown, existing: Definition | undefined): Definition | Reply {
    if (typeof body !== "object" || body === null || Array.isArray(body)) return json(400, { message: "The request body is not a resource" });
    const input = body as Record<string, unknown>;
    const definition = blankDefinition();
    definition.id = typeof input.id === "number" ? input.id : 0;
    definition.name = typeof input.name === "string" ? input.name : "";
    definition.implementation = typeof input.implementation === "string" ? input.implementation : "";
    definition.configContract = typeof input.configContract === "string" ? input.configContract : "";
    definition.includeHealthWarnings = input.includeHealthWarnings === true;
    definition.tags = Array.isArray(input.tags) ? input.tags.filter((tag): tag is number => typeof tag === "number") : [];
    for (const event of events) definition.events[event] = input[event] === true;
    const list = Array.isArray(input.fields) ? (input.fields as { name?: unknown; value?: unknown }[]) : [];
    const field = (name: string): { value?: unknown } | undefined => list.find((entry) => entry && entry.name === name);
    const url = field("url");
    if (url) definition.settings.url = url.value === undefined || url.value === null ? null : String(url.value);
    const method = field("method");
    if (method && method.value !== undefined && method.value !== null) definition.settings.method = Number(method.value);
    const username = field("username");
    if (username) definition.settings.username = username.value === undefined || username.value === null ? null : String(username.value);
    const password = field("password");
    if (password) {
      definition.settings.password =
        password.value === PRIVATE_VALUE && existing ? existing.settings.password : password.value === undefined || password.value === null ? null : String(password.value);
    }
    const headers = field("headers");
    if (hasHeaders && headers && Array.isArray(headers.value)) {
      definition.settings.headers = (headers.value as { key?: unknown; value?: unknown }[]).map((entry) => ({ key: String(entry.key ?? ""), value: String(entry.value ?? "") }));
    }
    return definition;
  }

  /** The shared rules (`ProviderControllerBase`'s constructor). */
  function sharedRules(definition: Definition, fieldsGiven: boolean, post: boolean): Reply | undefined {
    const problems: { propertyName: string; errorMessage: string; attemptedValue?: unknown }[] = [];
    if (definition.name === "") problems.push({ propertyName: "Name", errorMessage: "'Name' must not be empty.", attemptedValue: "" });
    const clash = [...definitions.values()].some((other) => other.name.toLowerCase() === definition.name.toLowerCase() && other.id !== definition.id);
    if (definition.name !== "" && clash) problems.push({ propertyName: "Name", errorMessage: "Should be unique", attemptedValue: definition.name });
    if (definition.implementation === "") problems.push({ propertyName: "Implementation", errorMessage: "'Implementation' must not be empty." });
    if (definition.configContract === "") problems.push({ propertyName: "ConfigContract", errorMessage: "'Config Contract' must not be empty." });
    if (post && !fieldsGiven) problems.push({ propertyName: "Fields", errorMessage: "'Fields' must not be empty." });
    if (definition.implementation !== "" && definition.implementation !== "Webhook") {
      // The fake knows one kind of connection through the API (unverified answer).
      problems.push({ propertyName: "Implementation", errorMessage: `The fake only takes Webhook connections, not ${definition.implementation}` });
    }
    return problems.length ? failures(problems) : undefined;
  }

  function settingsValid(settings: Settings): boolean {
    if (settings.url === null) return false;
    try {
      const url = new URL(settings.url);
      return /^https?:$/.test(url.protocol) && !/\s/.test(settings.url);
    } catch {
      return false;
    }
  }

  function validateSettings(definition: Definition): Reply | undefined {
    if (settingsValid(definition.settings)) return undefined;
    return failures([{ propertyName: "Url", errorMessage: `Invalid Url: '${definition.settings.url ?? ""}'`, attemptedValue: definition.settings.url }]);
  }

  /** The Test event sent to the connection's URL (`Webhook.Test` → `WebhookProxy.SendWebhook`). */
  async function runTest(definition: Definition): Promise<Reply | undefined> {
    const settings = definition.settings;
    const url = settings.url ?? "";
    const method = settings.method === 2 ? "PUT" : settings.method === 1 ? "POST" : undefined;
    if (!method) return json(500, { message: `Specified argument was out of the range of valid values. (Parameter 'Invalid Webhook method ${settings.method}')` });
    const outcome = await deliver(app, url, method, settings);
    tests.push({ id: definition.id === 0 ? undefined : definition.id, url, method, ok: outcome.kind === "ok", status: outcome.kind === "answer" || outcome.kind === "ok" ? outcome.status : undefined });
    if (outcome.kind === "ok") return undefined;
    if (outcome.kind === "answer") {
      const failure = `Unable to post to webhook: HTTP request failed: [${outcome.status}:${statusName(outcome.status)}] [${method}] at [${url}]`;
      const prefixed = app.type === "sonarr" && !app.v3 ? true : app.type === "radarr";
      return failures([{ propertyName: "Url", errorMessage: prefixed ? `Unable to send test message: ${failure}` : failure }]);
    }
    return json(500, { message: outcome.message, description: `System.Net.Http.HttpRequestException: ${outcome.message}` });
  }

  function parse(body: string): unknown {
    try {
      return JSON.parse(body);
    } catch {
      return undefined;
    }
  }

  return {
    tests,
    list() {
      const all = [...definitions.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      return json(200, all.map((definition) => toResource(definition)));
    },
    get(id) {
      const definition = definitions.get(id);
      return definition ? json(200, toResource(definition)) : json(404, { message: "NotFound" });
    },
    schema() {
      return json(200, [toResource(blankDefinition(), true)]);
    },
    async create(body) {
      const input = parse(body);
      const model = toModel(input, undefined);
      if ("status" in model) return model;
      model.id = 0;
      const fieldsGiven = Array.isArray((input as { fields?: unknown }).fields);
      const shared = sharedRules(model, fieldsGiven, true);
      if (shared) return shared;
      if (enabled(model)) {
        const invalid = validateSettings(model);
        if (invalid) return invalid;
        const failed = await runTest(model);
        if (failed) return failed;
      }
      model.id = nextId++;
      definitions.set(model.id, model);
      return json(201, toResource(model));
    },
    async update(routeId, body, query) {
      const input = parse(body);
      const bodyId = typeof (input as { id?: unknown } | undefined)?.id === "number" ? ((input as { id: number }).id as number) : undefined;
      const existing = (routeId !== undefined ? definitions.get(routeId) : undefined) ?? (bodyId !== undefined ? definitions.get(bodyId) : undefined);
      if (!existing) return json(404, { message: "NotFound" });
      const model = toModel(input, existing);
      if ("status" in model) return model;
      model.id = existing.id;
      const shared = sharedRules(model, true, false);
      if (shared) return shared;
      const forceSave = (query.get("forceSave") ?? "").toLowerCase() === "true";
      const changed = JSON.stringify(model) !== JSON.stringify(existing);
      const testsWhenUnchanged = app.v3 || app.type === "readarr";
      if (enabled(model)) {
        const invalid = validateSettings(model);
        if (invalid) return invalid;
        if (!forceSave && (changed || testsWhenUnchanged)) {
          const failed = await runTest(model);
          if (failed) return failed;
        }
      }
      if (changed) definitions.set(model.id, model);
      return json(202, toResource(definitions.get(model.id) ?? model));
    },
    remove(id) {
      definitions.delete(id);
      failing.delete(id);
      return json(200, {});
    },
    async test(body) {
      const input = parse(body);
      const bodyId = typeof (input as { id?: unknown } | undefined)?.id === "number" ? ((input as { id: number }).id as number) : 0;
      const existing = bodyId > 0 ? definitions.get(bodyId) : undefined;
      const model = toModel(input, existing);
      if ("status" in model) return model;
      model.id = existing ? existing.id : 0;
      const invalid = validateSettings(model);
      if (invalid) return invalid;
      const failed = await runTest(model);
      if (existing) {
        // NotificationFactory.Test: RecordSuccess ends the hold (S v3 has no such status: nothing to end).
        if (failed) failing.add(existing.id);
        else failing.delete(existing.id);
      }
      return failed ?? { status: 200, contentType: "text/plain; charset=utf-8", body: "{}" };
    },
    health() {
      const entries: Record<string, unknown>[] = extraHealth.map((entry) => ({ ...entry, wikiUrl: `https://wiki.servarr.com/${app.type}/system` }));
      if (!app.v3) {
        const valid = [...definitions.values()].filter((definition) => definition.implementation !== "Webhook" || settingsValid(definition.settings));
        const held = valid.filter((definition) => failing.has(definition.id));
        const wikiUrl = `https://wiki.servarr.com/${app.type}/system#notifications-are-unavailable-due-to-failures`;
        if (held.length > 0 && held.length === valid.length) {
          entries.push({ source: "NotificationStatusCheck", type: "error", message: "All notifications are unavailable due to failures", wikiUrl });
        } else if (held.length > 0) {
          entries.push({
            source: "NotificationStatusCheck",
            type: "warning",
            message: `Notifications unavailable due to failures: ${held.map((definition) => definition.name).join(", ")}`,
            wikiUrl,
          });
        }
      }
      return json(200, entries);
    },
    seed(input) {
      const definition = blankDefinition();
      definition.id = nextId++;
      definition.name = input.name ?? "autoscan";
      definition.implementation = input.implementation ?? "Webhook";
      definition.configContract = input.implementation && input.implementation !== "Webhook" ? `${input.implementation}Settings` : "WebhookSettings";
      definition.settings.url = input.url ?? null;
      definition.settings.method = input.method ?? 1;
      definition.settings.username = input.username ?? null;
      definition.settings.password = input.password ?? null;
      definition.tags = [...(input.tags ?? [])];
      for (const [event, on] of Object.entries(input.events ?? {})) {
        if (!events.includes(event)) throw new Error(`fake-arr: ${app.facts.appName}${app.v3 ? " v3" : ""} has no event ${event}`);
        definition.events[event] = on;
      }
      definitions.set(definition.id, definition);
      return definition.id;
    },
    setFailing(id, on) {
      if (app.v3) throw new Error("fake-arr: Sonarr v3 has no NotificationStatusCheck (it never holds a connection back)");
      if (!definitions.has(id)) throw new Error(`fake-arr: no connection ${id}`);
      if (on) failing.add(id);
      else failing.delete(id);
    },
    addHealth(entry) {
      extraHealth.push(entry);
    },
    snapshot() {
      return [...definitions.values()].map((definition) => ({
        id: definition.id,
        name: definition.name,
        implementation: definition.implementation,
        url: definition.settings.url,
        method: definition.settings.method,
        username: definition.settings.username,
        password: definition.settings.password,
        events: { ...definition.events },
        enabled: enabled(definition),
        tags: [...definition.tags],
        failing: failing.has(definition.id),
      }));
    },
  };
}

type Delivery = { kind: "ok"; status: number } | { kind: "answer"; status: number } | { kind: "error"; message: string };

/** One delivery of the Test event, as the app sends it: JSON, preemptive Basic auth, the extra headers. */
function deliver(app: FakeApp, url: string, method: string, settings: Settings): Promise<Delivery> {
  const target = new URL(url);
  const body = JSON.stringify(testPayload(app));
  const headers: Record<string, string> = {
    Accept: "application/json",
    "Content-Type": "application/json",
    "Content-Length": String(Buffer.byteLength(body)),
    "User-Agent": `${app.facts.appName}/${app.version} (ubuntu 24.04)`,
  };
  if (settings.username || settings.password) {
    headers.Authorization = `Basic ${Buffer.from(`${settings.username ?? ""}:${settings.password ?? ""}`, "latin1").toString("base64")}`;
  }
  for (const header of settings.headers) headers[header.key] = header.value;
  const hostPort = `${target.hostname}:${target.port || (target.protocol === "https:" ? "443" : "80")}`;
  const send = target.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise((resolve) => {
    const req = send(target, { method, headers, agent: false, timeout: 5000 }, (res) => {
      res.resume();
      res.on("end", () => {
        const status = res.statusCode ?? 0;
        resolve(status >= 200 && status < 400 ? { kind: "ok", status } : { kind: "answer", status });
      });
    });
    req.on("timeout", () => {
      req.destroy();
      resolve({ kind: "error", message: "Http request timed out" });
    });
    req.on("error", (error: NodeJS.ErrnoException) => {
      const words: Record<string, string> = { ECONNREFUSED: "Connection refused", ENOTFOUND: "Name or service not known", EAI_AGAIN: "Resource temporarily unavailable", ECONNRESET: "Connection reset by peer" };
      resolve({ kind: "error", message: `${words[error.code ?? ""] ?? error.message} (${hostPort})` });
    });
    req.end(body);
  });
}

/** `BuildTestPayload`: the Grab shape with the item's path `C:\testpath`. */
function testPayload(app: FakeApp): Record<string, unknown> {
  const common = { eventType: "Test", instanceName: app.facts.appName, applicationUrl: "" };
  switch (app.type) {
    case "sonarr":
      return { ...common, series: { id: 1, title: "Test Title", path: "C:\\testpath", tvdbId: 1234, tags: ["test-tag"] }, episodes: [{ id: 123, episodeNumber: 1, seasonNumber: 1, title: "Test title" }] };
    case "radarr":
      return { ...common, movie: { id: 1, title: "Test Title", year: 1970, folderPath: "C:\\testpath", tags: ["test-tag"] }, remoteMovie: { title: "Test title", year: 1970 } };
    case "lidarr":
      return { ...common, artist: { id: 1, name: "Test Name", path: "C:\\testpath", mbId: "aaaaa-aaa-aaaa-aaaaaa" }, albums: [{ id: 123, title: "Test title" }] };
    case "readarr":
      return { ...common, author: { id: 1, name: "Test Name", path: "C:\\testpath", goodreadsId: "1" }, books: [{ id: 123, title: "Test title" }] };
  }
}

/** .NET's `HttpStatusCode` names, for the failure's words. */
function statusName(status: number): string {
  const names: Record<number, string> = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    413: "RequestEntityTooLarge",
    415: "UnsupportedMediaType",
    429: "TooManyRequests",
    500: "InternalServerError",
    502: "BadGateway",
    503: "ServiceUnavailable",
    504: "GatewayTimeout",
  };
  return names[status] ?? String(status);
}
