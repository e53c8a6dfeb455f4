import { mkdtempSync, readFileSync, rmSync } from "node:fs";
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
// Every scope, but only the collection 'mine'.
const RESTRICTED = "restricted-0123456789abcdef";

/** The operations and the scope each needs, as docs/api.md (Access) states them. */
const SCOPES: Record<string, Scope | undefined> = {
  "GET /get_relevant_documents": "read",
  "POST /get_relevant_documents": "read",
  "GET /get_content_by_tag": "read",
  "POST /get_content_by_tag": "read",
  "GET /get_list_of_documents_names": "read",
  "GET /get_list_of_collection": "read",
  "GET /get_document_status": "read",
  "GET /get_document_chunks": "read",
  "GET /metrics": "read",
  "POST /load_document_to_collection": "write",
  "POST /load_text_to_collection": "write",
  "POST /load_texts_to_collection": "write",
  "DELETE /delete_document_from_collection": "write",
  "DELETE /delete_collection": "admin",
  "POST /doctor": "admin",
  "GET /healthz": undefined,
  "GET /readyz": undefined,
  "GET /openapi.json": undefined,
  "GET /docs": undefined,
  "GET /docs/filters": undefined,
};

/** A valid request of each operation that names collections, for the collection `c`. */
const naming = (c: string): Record<string, { query: Record<string, string>; body?: unknown; form?: boolean }> => ({
  "GET /get_relevant_documents": { query: { query: "q", collection_names: c } },
  "POST /get_relevant_documents": { query: { query: "q" }, body: { collection_names: ["mine", c] } },
  "GET /get_content_by_tag": { query: { collection_name: c } },
  "POST /get_content_by_tag": { query: { collection_name: c }, body: { tag_info: "" } },
  "GET /get_list_of_documents_names": { query: { collection_name: c } },
  "GET /get_document_status": { query: { collection_name: c, id_value: "d1" } },
  "GET /get_document_chunks": { query: { collection_name: c, id_value: "d1" } },
  "POST /load_document_to_collection": { query: { collection_name: c }, form: true },
  "POST /load_text_to_collection": { query: { collection_name: c }, body: { text: "t" } },
  "POST /load_texts_to_collection": { query: { collection_name: c }, body: { documents: [{ text: "t" }] } },
  "DELETE /delete_document_from_collection": { query: { collection_name: c, id_value: "d1" } },
  "DELETE /delete_collection": { query: { collection_name: c } },
  "POST /doctor": { query: { collection_name: c } },
});

interface Operation {
  method: string;
  path: string;
  scope: Scope | undefined;
  parameters: { name: string }[];
  body: unknown;
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
    const tokens = [
      ...ALL_SCOPES.map((s) => `${lacking[s]}:${ALL_SCOPES.filter((t) => t !== s).join("+")}`),
      `${RESTRICTED}:read+write+admin:mine`,
    ].join(",");
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
    const doc = (await (await fetch(`${base}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { security?: { bearer: Scope[] }[]; parameters?: { name: string }[]; requestBody?: unknown }>>;
    };
    described = Object.entries(doc.paths).flatMap(([p, ops]) =>
      Object.entries(ops).map(([method, op]) => ({
        method,
        path: p,
        scope: op.security?.[0]?.bearer[0],
        parameters: op.parameters ?? [],
        body: op.requestBody,
      })),
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

  it("asks each operation for the scope docs/api.md gives it", () => {
    expect(Object.fromEntries(described.map((o) => [`${o.method.toUpperCase()} ${o.path}`, o.scope]))).toEqual(SCOPES);
    const page = readFileSync(path.resolve(import.meta.dirname, "../../../docs/api.md"), "utf8");
    const table = new Map([...page.matchAll(/^\| `(read|write|admin)` \| (.+) \|$/gm)].map((m) => [m[1], m[2]!]));
    for (const [op, scope] of Object.entries(SCOPES)) {
      if (!scope) continue;
      const route = op.split(" ")[1]!;
      const name = route === "/metrics" ? route : route.slice(1);
      expect(table.get(scope), `${op} in the ${scope} row of docs/api.md`).toContain(`\`${name}\``);
    }
  });

  it("refuses a token restricted to other collections on every operation that names one, before looking the collection up", async () => {
    // Every operation whose input names a collection, read from the document: a new one must be added above.
    const names = (o: Operation) =>
      o.parameters.some((p) => p.name.startsWith("collection_name")) || JSON.stringify(o.body ?? {}).includes("collection_name");
    const withCollections = described.filter(names).map((o) => `${o.method.toUpperCase()} ${o.path}`);
    expect(withCollections.sort()).toEqual(Object.keys(naming("x")).sort());
    for (const [collection, refused] of [
      ["theirs", true],
      ["mine", false],
    ] as const) {
      for (const [op, input] of Object.entries(naming(collection))) {
        const [method, p] = op.split(" ") as [string, string];
        const url = new URL(p, base);
        for (const [k, v] of Object.entries(input.query)) url.searchParams.set(k, v);
        const headers: Record<string, string> = { authorization: `Bearer ${RESTRICTED}` };
        let body: string | FormData | undefined;
        if (input.form) {
          body = new FormData();
          body.set("file", new Blob(["some text"], { type: "text/plain" }), "a.txt");
        } else if (input.body !== undefined) {
          body = JSON.stringify(input.body);
          headers["content-type"] = "application/json";
        }
        const res = await fetch(url, { method, headers, body });
        const problem = (await res.json()) as { detail?: string };
        if (refused) {
          expect(res.status, `${op} on ${collection}`).toBe(403);
          expect(problem.detail).toBe("this token may not use the collection 'theirs'; it may use: mine");
        } else {
          expect(res.status, `${op} on ${collection}: ${problem.detail}`).not.toBe(403);
        }
      }
    }
  });

  it("lets a restricted token list only its collections, and not read metrics that span them all", async () => {
    const get = (p: string, token: string) => fetch(`${base}${p}`, { headers: { authorization: `Bearer ${token}` } });
    for (const c of ["mine", "theirs"]) {
      await fetch(`${base}/load_text_to_collection?collection_name=${c}`, {
        method: "POST",
        headers: { authorization: `Bearer ${lacking.admin}`, "content-type": "application/json" },
        body: JSON.stringify({ text: c }),
      });
    }
    const all = (await (await get("/get_list_of_collection", lacking.admin)).json()) as { collections: { name: string }[] };
    expect(all.collections.map((c) => c.name).sort()).toEqual(["mine", "theirs"]);
    const own = (await (await get("/get_list_of_collection", RESTRICTED)).json()) as { collections: { name: string }[] };
    expect(own.collections.map((c) => c.name)).toEqual(["mine"]);
    const metrics = await get("/metrics", RESTRICTED);
    expect(metrics.status).toBe(403);
    expect((await get("/metrics", lacking.admin)).status).toBe(200);
  });
});
