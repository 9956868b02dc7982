import { readFile } from "node:fs/promises";
import { JWT } from "google-auth-library";
import * as v from "valibot";
import { ConfigError } from "../core/errors.ts";

/**
 * A service account key (docs: ../shared/reference/integrations.md §2.4). Without domain-wide delegation the account
 * sees only its own empty My Drive and the shared drives it was added to as a member, so it is meant for
 * `CLOUD.TEAMDRIVE` setups. Tokens come from a signed JWT (RS256); there is no refresh token.
 */
export interface ServiceAccountKey {
  readonly clientEmail: string;
  readonly privateKey: string;
  readonly privateKeyId?: string;
}

/** Where google-auth-library's token fetcher (gtoken) always posts: it ignores the key's `token_uri`. */
const GOOGLE_TOKEN_URL = "https://oauth2.googleapis.com/token";

const KeySchema = v.object({
  type: v.literal("service_account", 'type must be "service_account" (is this an OAuth client file instead?)'),
  client_email: v.pipe(v.string("client_email is missing"), v.email("client_email is not an e-mail address")),
  private_key: v.pipe(v.string("private_key is missing"), v.includes("PRIVATE KEY", "private_key is not a PEM key")),
  private_key_id: v.optional(v.string()),
});

export async function loadServiceAccountKey(source: { file: string } | { json: string; origin: string }): Promise<ServiceAccountKey> {
  const origin = "file" in source ? source.file : source.origin;
  let text: string;
  if ("file" in source) {
    try {
      text = await readFile(source.file, "utf8");
    } catch (error) {
      throw new ConfigError(`Cannot read the service account key ${source.file}: ${(error as Error).message}`);
    }
  } else text = source.json;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new ConfigError(`The service account key ${origin} is not valid JSON.`);
  }
  const parsed = v.safeParse(KeySchema, json);
  if (!parsed.success) {
    throw new ConfigError(`The service account key ${origin} is not usable: ${parsed.issues.map((i) => i.message).join("; ")}.`);
  }
  const key = parsed.output;
  return { clientEmail: key.client_email, privateKey: key.private_key, privateKeyId: key.private_key_id };
}

export function createServiceAccountClient(key: ServiceAccountKey, options: { scope: string; tokenUrl?: string }): JWT {
  const client = new JWT({ email: key.clientEmail, key: key.privateKey, keyId: key.privateKeyId, scopes: [options.scope] });
  const tokenUrl = options.tokenUrl;
  if (tokenUrl) {
    // Test/dev only: gtoken's token URL is hard-coded, so the request is redirected on the client's own transporter.
    client.transporter.interceptors.request.add({
      resolved: async (config) => {
        if (String(config.url) === GOOGLE_TOKEN_URL) config.url = new URL(tokenUrl);
        return config;
      },
    });
  }
  return client;
}
