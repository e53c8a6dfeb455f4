import { mkdtempSync, rmSync } from "node:fs";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ALL_SCOPES, createLogger, createServices, loadConfig, type ApiServices, type Scope } from "@docstore/shared";
import { createApp } from "./app.ts";
import { createAuthenticator } from "./auth.ts";

// For each scope, a token holding every scope but that one: a 403 with it proves which scope a
// route demands.
const lacking = Object.fromEntries(ALL_SCOPES.map((s) => [s, `lacks-${s}-0123456789abcdef`])) as Record<Scope, string>;

interface Operation {
  method: string;
  path: string;
  scope: Scope | undefined;
}

describe("the route table", () => {
  let dataDir: string;
  let services: ApiServices;
  let server: Server;
  let base: string;
  let served: string[];
  let described: Operation[];

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), "docstore-routes-"));
    const tokens = ALL_SCOPES.map((s) => `${lacking[s]}:${ALL_SCOPES.filter((t) => t !== s).join("+")}`).join(",");
    const config = loadConfig({ DATA_DIR: dataDir, API_TOKENS: tokens, LOG_LEVEL: "silent" });
    const logger = createLogger("silent");
    services = createServices(config, logger, { role: "api" });
    const app = createApp({ config, logger, services, authenticate: createAuthenticator(config.auth.tokens ?? []) });
    server = app.listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

    // What Express serves, read from its router rather than from the table.
    const routes = app.router.stack.flatMap((layer) => (layer.route ? [layer.route] : []));
    served = [...new Set(routes.flatMap((r) => r.stack.map((handler) => `${handler.method.toUpperCase()} ${r.path}`)))];
    const doc = (await (await fetch(`${base}/openapi.json`)).json()) as { paths: Record<string, Record<string, { security?: { bearer: Scope[] }[] }>> };
    described = Object.entries(doc.paths).flatMap(([p, ops]) =>
      Object.entries(ops).map(([method, op]) => ({ method, path: p, scope: op.security?.[0]?.bearer[0] })),
    );
  });

  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve));
    await services?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("describes exactly the operations Express serves", () => {
    expect(served.sort()).toEqual(described.map((o) => `${o.method.toUpperCase()} ${o.path}`).sort());
    expect(described.length).toBeGreaterThanOrEqual(17);
  });

  it("demands the scope the document names, and no token where it names none", async () => {
    for (const op of described) {
      const call = (token?: string) =>
        fetch(`${base}${op.path}`, { method: op.method.toUpperCase(), headers: token ? { authorization: `Bearer ${token}` } : {} });
      const anonymous = await call();
      if (op.scope) {
        expect(anonymous.status, `${op.method} ${op.path} without a token`).toBe(401);
        const refused = await call(lacking[op.scope]);
        expect(refused.status, `${op.method} ${op.path} without '${op.scope}'`).toBe(403);
        expect(((await refused.json()) as { detail: string }).detail).toContain(`'${op.scope}'`);
      } else {
        expect(anonymous.status, `${op.method} ${op.path} without a token`).toBe(200);
      }
    }
  });
});
