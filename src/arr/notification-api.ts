import * as v from "valibot";
import type { ArrClient, ArrRawAnswer } from "./arr-client.ts";
import { ArrApiError } from "./arr-errors.ts";
import { excerpt } from "../http/http-call.ts";
import { WEBHOOK_IMPLEMENTATION } from "./connection-facts.ts";

/**
 * The apps' connection ("notification") and health resources, through the *arr client (src/arr/arr-client.ts):
 * `GET {api}/notification`, `GET {api}/notification/schema`, `POST {api}/notification`, `PUT {api}/notification/{id}`,
 * `POST {api}/notification/test` and `GET {api}/health` (the provider controller, `ProviderControllerBase.cs`, and
 * `Health/HealthController.cs` of each app). A resource is kept whole (every property the app sent, the ones autoscan
 * does not know included): an update sends it back with only autoscan's changes, as the apps' own UI does.
 */
const fieldSchema = v.looseObject({ name: v.string(), value: v.optional(v.unknown()) });

const notificationSchema = v.looseObject({
  id: v.optional(v.number()),
  name: v.nullish(v.string()),
  implementation: v.nullish(v.string()),
  configContract: v.nullish(v.string()),
  fields: v.nullish(v.array(fieldSchema)),
  tags: v.nullish(v.array(v.unknown())),
});

export type NotificationResource = v.InferOutput<typeof notificationSchema>;

const healthSchema = v.array(
  v.looseObject({ source: v.nullish(v.string()), type: v.nullish(v.union([v.string(), v.number()])), message: v.nullish(v.string()) }),
);

export type HealthEntry = v.InferOutput<typeof healthSchema>[number];

/** Saving or testing a connection: done, or the app's own words for why not. */
export type ProviderAnswer<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly refusal: string };

export async function listNotifications(client: ArrClient, signal?: AbortSignal): Promise<NotificationResource[]> {
  return client.readJson(await client.send("GET", "/notification", undefined, signal), v.array(notificationSchema));
}

/** The app's blank Webhook connection (`GET …/notification/schema`, the entry whose implementation is `Webhook`). */
export async function webhookTemplate(client: ArrClient, signal?: AbortSignal): Promise<NotificationResource> {
  const answer = await client.send("GET", "/notification/schema", undefined, signal);
  const templates = client.readJson(answer, v.array(notificationSchema));
  const found = templates.find((template) => template.implementation?.toLowerCase() === WEBHOOK_IMPLEMENTATION.toLowerCase());
  if (!found) throw new ArrApiError(client.name, `${answer.what} lists no ${WEBHOOK_IMPLEMENTATION} connection`, answer.status);
  return found;
}

/**
 * `POST …/notification`. An enabled connection is tested by the app before it is saved: one it cannot deliver to is
 * refused (400 with the test's failure, or 500 when the delivery threw, e.g. connection refused).
 */
export async function createNotification(client: ArrClient, resource: NotificationResource, signal?: AbortSignal): Promise<ProviderAnswer<NotificationResource>> {
  return saved(client, await client.send("POST", "/notification", resource, signal));
}

/** `PUT …/notification/{id}`: tested first, as a new one is, when it is enabled and changed. */
export async function updateNotification(
  client: ArrClient,
  id: number,
  resource: NotificationResource,
  signal?: AbortSignal,
): Promise<ProviderAnswer<NotificationResource>> {
  return saved(client, await client.send("PUT", `/notification/${id}`, resource, signal));
}

/**
 * `POST …/notification/test`: the app sends its Test event to the connection's URL. For a saved connection (with its
 * `id`) a passed test also ends the hold the app puts on a connection after failed deliveries (`RecordSuccess`).
 */
export async function testNotification(client: ArrClient, resource: NotificationResource, signal?: AbortSignal): Promise<ProviderAnswer<true>> {
  const answer = await client.send("POST", "/notification/test", resource, signal);
  if (answer.status >= 200 && answer.status < 300) return { ok: true, value: true };
  return refused(client, answer);
}

export async function readHealth(client: ArrClient, signal?: AbortSignal): Promise<HealthEntry[]> {
  return client.readJson(await client.send("GET", "/health", undefined, signal), healthSchema);
}

function saved(client: ArrClient, answer: ArrRawAnswer): ProviderAnswer<NotificationResource> {
  if (answer.status >= 200 && answer.status < 300) return { ok: true, value: client.readJson(answer, notificationSchema) };
  return refused(client, answer);
}

const failuresSchema = v.array(v.looseObject({ propertyName: v.nullish(v.string()), errorMessage: v.nullish(v.string()), isWarning: v.nullish(v.boolean()) }));
const errorSchema = v.looseObject({ message: v.nullish(v.string()), errorMessage: v.nullish(v.string()) });

/**
 * A refusal in the app's words: 400 is a list of validation failures (`[{propertyName, errorMessage, …}]`, the
 * error pipeline's answer to a `ValidationException`); 500 is `{message, description}` (an exception, such as the
 * test delivery's connection error). Anything else is thrown, as the client throws it.
 */
function refused(client: ArrClient, answer: ArrRawAnswer): { ok: false; refusal: string } {
  let json: unknown;
  try {
    json = JSON.parse(answer.body);
  } catch {
    json = undefined;
  }
  if (answer.status === 400) {
    const failures = v.safeParse(failuresSchema, json);
    if (failures.success && failures.output.length > 0) {
      const errors = failures.output.filter((failure) => failure.isWarning !== true);
      const words = (errors.length ? errors : failures.output).map((failure) => oneLine(failure.errorMessage ?? failure.propertyName ?? "invalid"));
      return { ok: false, refusal: [...new Set(words)].join("; ") };
    }
  }
  if (answer.status === 400 || answer.status >= 500) {
    const error = v.safeParse(errorSchema, json);
    const message = error.success ? (error.output.message ?? error.output.errorMessage) : undefined;
    if (message) return { ok: false, refusal: oneLine(message) };
    return { ok: false, refusal: `${answer.what} answered ${answer.status}: ${excerpt(answer.body)}` };
  }
  return client.readJson(answer, v.never());
}

function oneLine(text: string): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > 300 ? `${line.slice(0, 297)}...` : line;
}

/** The value of one of the connection's fields (`url`, `method`). */
export function fieldValue(resource: NotificationResource, name: string): unknown {
  return resource.fields?.find((field) => field.name === name)?.value;
}

/** The resource with one field set (added when the app did not list it). */
export function withField(resource: NotificationResource, name: string, value: unknown): NotificationResource {
  const fields = resource.fields ?? [];
  const found = fields.some((field) => field.name === name);
  return { ...resource, fields: found ? fields.map((field) => (field.name === name ? { ...field, value } : field)) : [...fields, { name, value }] };
}
