import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { composeService, findCompose, renderCompose } from "./support/compose.ts";

/**
 * deploy/compose.postgres.yml as Compose renders it: PostgreSQL with a health check and its password from a secret,
 * two autoscan instances (one config folder read-only, a data volume each, the URL from a secret, started once
 * PostgreSQL is healthy), and Caddy as the one address. Skipped loudly without the Compose CLI, required in CI with
 * Docker. (The Caddyfile was checked by hand with `caddy validate`; the test machine's Caddy, 2.6.2, predates
 * `request_buffers`, so it is not run here.)
 */
const DEPLOY = join(dirname(fileURLToPath(import.meta.url)), "..", "deploy");
const FILE = join(DEPLOY, "compose.postgres.yml");
const CADDYFILE = join(DEPLOY, "Caddyfile.autoscan");

const compose = findCompose();
const required = process.env.CI === "true" && process.env.AUTOSCAN_REQUIRE_DOCKER === "1";
if (!compose.ok && !required) console.warn(`\n*** SKIPPED compose.postgres tests: ${compose.reason} (../shared/tools/docker-sandbox up) ***\n`);
const describeCompose = compose.ok || required ? describe : describe.skip;

describeCompose("deploy/compose.postgres.yml, rendered by Compose", () => {
  let cached: string | undefined;
  const rendered = (): string => {
    if (!compose.ok) throw new Error(`the compose tests are required here but ${compose.reason}`);
    return (cached ??= renderCompose(compose.argv, DEPLOY, [FILE]));
  };

  it("PostgreSQL 17: a named volume, a pg_isready health check, the password from a secret", () => {
    const postgres = composeService(rendered(), "postgres");
    expect(postgres).toMatch(/image: postgres:17/);
    expect(postgres).toMatch(/POSTGRES_PASSWORD_FILE: \/run\/secrets\/postgres-password/);
    expect(postgres).not.toMatch(/POSTGRES_PASSWORD:/);
    expect(postgres).toMatch(/pg_isready/);
    expect(postgres).toMatch(/postgres-data:\/var\/lib\/postgresql\/data/);
  });

  it.each(["autoscan-1", "autoscan-2"])("%s: the shared config read-only, its own data volume, the URL from a secret, after PostgreSQL is healthy", (name) => {
    const all = rendered();
    const autoscan = composeService(all, name);
    expect(autoscan).toMatch(/image: autoscan:local/);
    expect(autoscan).toMatch(new RegExp(`hostname: ${name}`));
    expect(autoscan).toMatch(/SERVER_DATABASE_URL_FILE: \/run\/secrets\/database-url/);
    expect(autoscan).not.toMatch(/SERVER_DATABASE_URL:/);
    expect(autoscan).toMatch(/AUTOSCAN_CONFIG: \/etc\/autoscan\/config\.json/);
    expect(autoscan).toMatch(/AUTOSCAN_DATA_DIR: \/config/);
    expect(autoscan).toMatch(/\/config:\/etc\/autoscan:ro/);
    expect(autoscan).toMatch(new RegExp(`- ${name}-data:/config`));
    expect(autoscan).toMatch(/postgres:\n\s+condition: service_healthy/);
    expect(autoscan).not.toMatch(/ports:/);
  });

  it("one address: Caddy on 3468 with the Caddyfile, in front of both", () => {
    const proxy = composeService(rendered(), "proxy");
    expect(proxy).toMatch(/image: caddy:2/);
    expect(proxy).toMatch(/published: 3468|3468:3468/);
    expect(proxy).toMatch(/Caddyfile\.autoscan:\/etc\/caddy\/Caddyfile:ro/);
  });
});

describe("deploy/Caddyfile.autoscan", () => {
  const text = readFileSync(CADDYFILE, "utf8");

  it("balances round robin over both instances with /health checks, and retries a refused connection", () => {
    expect(text).toMatch(/reverse_proxy autoscan-1:3467 autoscan-2:3467/);
    expect(text).toMatch(/lb_policy round_robin/);
    expect(text).toMatch(/health_uri \/health/);
    expect(text).toMatch(/lb_try_duration \d+s/);
  });
});
