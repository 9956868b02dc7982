import { IncomingMessage } from "node:http";
import type { Context } from "hono";

/**
 * Reads and decodes a request body with limits, so that nothing a client sends can make the app answer 500 or
 * hold unbounded memory: the size is capped while streaming (413), text must be valid UTF-8, JSON must parse and be
 * at most `MAX_JSON_DEPTH` deep, forms must be well-formed. Every refusal carries a one-line reason.
 *
 * plex_autoscan parsed JSON only for exactly `application/json`; we also take `…+json`, and a body that starts with
 * `{` when no content type (or text/plain) was sent, as some scripts forget the header.
 */
export type Body =
  | { readonly kind: "empty" }
  | { readonly kind: "json"; readonly value: unknown }
  | { readonly kind: "form"; readonly fields: FormFields }
  | { readonly kind: "problem"; readonly status: 400 | 413 | 415; readonly reason: string };

export type FormFields = ReadonlyMap<string, readonly string[]>;

export const MAX_JSON_DEPTH = 64;

export async function readBody(c: Context, maxBytes: number): Promise<Body> {
  let bytes: Uint8Array | undefined;
  try {
    bytes = await readBytes(c, maxBytes);
  } catch {
    return { kind: "problem", status: 400, reason: "The request body could not be read" };
  }
  if (!bytes) return tooLarge(maxBytes);
  if (bytes.length === 0) return { kind: "empty" };
  const type = mediaType(c.req.header("content-type"));
  if (type === "application/x-www-form-urlencoded") return decodeUrlEncoded(bytes);
  if (type === "multipart/form-data") return decodeMultipart(bytes, c.req.header("content-type") ?? "");
  if (type === "application/json" || type.endsWith("+json") || ((type === "" || type === "text/plain") && looksLikeJson(bytes))) {
    return decodeJson(bytes);
  }
  return {
    kind: "problem",
    status: 415,
    reason: `Unsupported Content-Type '${type || "none"}': send application/json (webhooks) or a form (eventType=Manual&filepath=…)`,
  };
}

/** The body, or undefined when it is larger than `maxBytes` (checked on Content-Length first, then while reading). */
async function readBytes(c: Context, maxBytes: number): Promise<Uint8Array | undefined> {
  const declared = Number(c.req.header("content-length") ?? "0");
  if (Number.isFinite(declared) && declared > maxBytes) return undefined;
  // Under @hono/node-server, read Node's request stream directly: touching `c.req.raw.body` would build a web
  // Request and a web stream over it, which costs more than the rest of a webhook's handling.
  const incoming = (c.env as { incoming?: unknown } | undefined)?.incoming;
  if (incoming instanceof IncomingMessage && !incoming.readableDidRead) return readIncoming(incoming, maxBytes);
  const stream = c.req.raw.body;
  if (!stream) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => undefined);
      return undefined;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, size);
}

function readIncoming(incoming: IncomingMessage, maxBytes: number): Promise<Uint8Array | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = (): void => {
      incoming.off("data", onData);
      incoming.off("end", onEnd);
      incoming.off("error", onError);
      incoming.off("close", onClose);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size <= maxBytes) return void chunks.push(chunk);
      cleanup();
      // Discard the rest; the 413 answer closes the connection.
      incoming.resume();
      resolve(undefined);
    };
    const onEnd = (): void => {
      cleanup();
      resolve(Buffer.concat(chunks, size));
    };
    const onError = (error: Error): void => {
      cleanup();
      reject(error);
    };
    const onClose = (): void => {
      cleanup();
      reject(new Error("The client closed the connection before the body was complete"));
    };
    incoming.on("data", onData);
    incoming.on("end", onEnd);
    incoming.on("error", onError);
    incoming.on("close", onClose);
  });
}

function tooLarge(maxBytes: number): Body {
  return { kind: "problem", status: 413, reason: `Request body larger than ${maxBytes} bytes (SERVER_MAX_REQUEST_BYTES)` };
}

export function mediaType(header: string | undefined): string {
  return (header ?? "").split(";", 1)[0]?.trim().toLowerCase() ?? "";
}

function decodeText(bytes: Uint8Array): string | undefined {
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    return undefined;
  }
}

function looksLikeJson(bytes: Uint8Array): boolean {
  for (const byte of bytes) {
    if (byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d || byte === 0xef || byte === 0xbb || byte === 0xbf) continue;
    return byte === 0x7b;
  }
  return false;
}

function decodeJson(bytes: Uint8Array): Body {
  const text = decodeText(bytes);
  if (text === undefined) return { kind: "problem", status: 400, reason: "The body is not valid UTF-8" };
  if (text.trim() === "") return { kind: "empty" };
  let value: unknown;
  try {
    // V8's parser is iterative, so any nesting parses without a stack overflow; depth is checked after.
    value = JSON.parse(text) as unknown;
  } catch {
    // V8's message quotes the body; the reason must not (it ends up in logs).
    return { kind: "problem", status: 400, reason: "The body is not valid JSON" };
  }
  if (jsonDepthExceeds(value, MAX_JSON_DEPTH)) {
    return { kind: "problem", status: 400, reason: `The JSON body is nested deeper than ${MAX_JSON_DEPTH} levels` };
  }
  return { kind: "json", value };
}

/** True when objects/arrays nest deeper than `max`: an iterative walk that stops at the first one too deep. */
export function jsonDepthExceeds(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  for (let entry = stack.pop(); entry; entry = stack.pop()) {
    const [node, depth] = entry;
    if (typeof node !== "object" || node === null) continue;
    if (depth > max) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (typeof child === "object" && child !== null) stack.push([child, depth + 1]);
    }
  }
  return false;
}

function decodeUrlEncoded(bytes: Uint8Array): Body {
  const text = decodeText(bytes);
  if (text === undefined) return { kind: "problem", status: 400, reason: "The form body is not valid UTF-8" };
  const fields = new Map<string, string[]>();
  for (const pair of text.split("&")) {
    if (pair === "") continue;
    const eq = pair.indexOf("=");
    const name = decodeFormPart(eq < 0 ? pair : pair.slice(0, eq));
    const value = decodeFormPart(eq < 0 ? "" : pair.slice(eq + 1));
    if (name === undefined || value === undefined) {
      return { kind: "problem", status: 400, reason: "The form body has a malformed %-escape or is not UTF-8" };
    }
    fields.set(name, [...(fields.get(name) ?? []), value]);
  }
  return { kind: "form", fields };
}

/** Unlike URLSearchParams, which turns bad escapes into U+FFFD silently, this refuses them. */
function decodeFormPart(part: string): string | undefined {
  try {
    return decodeURIComponent(part.replace(/\+/g, " "));
  } catch {
    return undefined;
  }
}

async function decodeMultipart(bytes: Uint8Array, contentType: string): Promise<Body> {
  let form: FormData;
  try {
    form = await new Response(bytes, { headers: { "content-type": contentType } }).formData();
  } catch {
    return { kind: "problem", status: 400, reason: "The multipart form body is malformed" };
  }
  const fields = new Map<string, string[]>();
  for (const [name, value] of form.entries()) {
    if (typeof value !== "string") return { kind: "problem", status: 400, reason: "Form fields must be text, not files" };
    fields.set(name, [...(fields.get(name) ?? []), value]);
  }
  return { kind: "form", fields };
}

export function firstField(fields: FormFields, name: string): string | undefined {
  return fields.get(name)?.[0];
}
