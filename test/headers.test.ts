/**
 * Headers on every answer: security headers always, with a Content-Security-Policy that fits
 * JSON answers and one that lets the /docs pages work; CORS only for the origins configured.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startService, type Service } from "./harness.ts";

let off: Service;
let listed: Service;
let any: Service;

beforeAll(async () => {
  [off, listed, any] = await Promise.all([
    startService(),
    startService({ env: { CORS_ORIGINS: "https://app.example.com, http://localhost:5173" } }),
    startService({ env: { CORS_ORIGINS: "*" } }),
  ]);
}, 60_000);

afterAll(async () => {
  await Promise.all([off, listed, any].map((s) => s?.stop()));
});

/** A raw request with the headers a browser would send, no token unless given. */
const call = (svc: Service, method: string, route: string, headers: Record<string, string> = {}) =>
  fetch(new URL(route, svc.url), { method, headers });

const strictPolicy = "default-src 'none';base-uri 'none';form-action 'none';frame-ancestors 'none'";

describe("security headers", () => {
  it("are on every answer: success, problem, unknown route, bad body, probe", async () => {
    const answers = [
      await call(off, "GET", "/healthz"),
      await call(off, "GET", "/openapi.json"),
      await call(off, "GET", "/get_list_of_collection", { authorization: `Bearer ${off.token}` }),
      await call(off, "GET", "/get_list_of_collection"), // 401
      await call(off, "GET", "/no/such/route"), // 404
      await fetch(new URL("/load_text_to_collection?collection_name=c", off.url), {
        method: "POST",
        headers: { authorization: `Bearer ${off.token}`, "content-type": "application/json" },
        body: "{not json",
      }), // 400 from the body parser
    ];
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 401, 404, 400]);
    for (const r of answers) {
      const at = `${r.status} ${r.url}`;
      expect(r.headers.get("x-content-type-options"), at).toBe("nosniff");
      expect(r.headers.get("content-security-policy"), at).toBe(strictPolicy);
      expect(r.headers.get("x-frame-options"), at).toBe("DENY");
      expect(r.headers.get("referrer-policy"), at).toBe("no-referrer");
      expect(r.headers.get("cross-origin-resource-policy"), at).toBe("same-origin");
      expect(r.headers.get("x-powered-by"), at).toBeNull();
      // Left to the TLS-terminating proxy.
      expect(r.headers.get("strict-transport-security"), at).toBeNull();
    }
  });

  it("let the /docs pages load their own scripts, styles, images and the OpenAPI document, and nothing from elsewhere", async () => {
    const r = await call(off, "GET", "/docs");
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toMatch(/^text\/html/);
    const policy = Object.fromEntries(
      r.headers
        .get("content-security-policy")!
        .split(";")
        .map((d) => {
          const [name, ...values] = d.trim().split(/\s+/);
          return [name!, values];
        }),
    );
    expect(policy).toMatchObject({
      "default-src": ["'self'"],
      "script-src": ["'self'"],
      "style-src": ["'self'", "'unsafe-inline'"],
      "img-src": ["'self'", "data:"],
      "connect-src": ["'self'"],
      "object-src": ["'none'"],
      "frame-ancestors": ["'none'"],
    });
    // No other host anywhere in the policy: only 'self', 'none', data: and blob:.
    expect(
      Object.values(policy)
        .flat()
        .filter((v) => !["'self'", "'none'", "'unsafe-inline'", "data:", "blob:"].includes(v)),
    ).toEqual([]);
    expect(r.headers.get("x-content-type-options")).toBe("nosniff");
    expect(r.headers.get("x-frame-options")).toBe("DENY");
  });
});

describe("CORS", () => {
  const preflight = (svc: Service, origin: string) =>
    call(svc, "OPTIONS", "/get_relevant_documents", {
      origin,
      "access-control-request-method": "POST",
      "access-control-request-headers": "authorization,content-type",
    });

  it("is off by default: no answer lets another origin read it, and a preflight is not granted", async () => {
    const r = await call(off, "GET", "/get_list_of_collection", {
      origin: "https://app.example.com",
      authorization: `Bearer ${off.token}`,
    });
    expect(r.status).toBe(200);
    expect(r.headers.get("access-control-allow-origin")).toBeNull();
    const p = await preflight(off, "https://app.example.com");
    expect(p.headers.get("access-control-allow-origin")).toBeNull();
    expect(p.headers.get("access-control-allow-methods")).toBeNull();
  });

  it("with CORS_ORIGINS listing origins, answers their preflights and lets them read answers; other origins get nothing", async () => {
    const p = await preflight(listed, "http://localhost:5173");
    expect(p.status).toBe(204);
    expect(p.headers.get("access-control-allow-origin")).toBe("http://localhost:5173");
    expect(p.headers.get("access-control-allow-methods")).toBe("GET,POST,DELETE");
    expect(p.headers.get("access-control-allow-headers")).toBe("Authorization,Content-Type,X-Request-Id");
    expect(p.headers.get("access-control-max-age")).toBe("600");
    expect(p.headers.get("access-control-allow-credentials")).toBeNull();
    expect(p.headers.get("vary")).toMatch(/Origin/);

    const r = await call(listed, "GET", "/get_list_of_collection", {
      origin: "https://app.example.com",
      authorization: `Bearer ${listed.token}`,
    });
    expect(r.status).toBe(200);
    expect(r.headers.get("access-control-allow-origin")).toBe("https://app.example.com");
    expect(r.headers.get("access-control-expose-headers")).toBe("X-Request-Id,Retry-After");
    // A refusal is readable too, so a browser client can show why.
    const refused = await call(listed, "GET", "/get_list_of_collection", { origin: "https://app.example.com" });
    expect(refused.status).toBe(401);
    expect(refused.headers.get("access-control-allow-origin")).toBe("https://app.example.com");

    const other = await call(listed, "GET", "/get_list_of_collection", {
      origin: "https://evil.example.net",
      authorization: `Bearer ${listed.token}`,
    });
    expect(other.headers.get("access-control-allow-origin")).toBeNull();
    expect((await preflight(listed, "https://evil.example.net")).headers.get("access-control-allow-origin")).toBeNull();
  });

  it("with CORS_ORIGINS=*, lets any origin read answers (tokens travel in a header, never in cookies)", async () => {
    const p = await preflight(any, "https://anywhere.example.org");
    expect(p.status).toBe(204);
    expect(p.headers.get("access-control-allow-origin")).toBe("*");
    const r = await call(any, "GET", "/get_list_of_collection", {
      origin: "https://anywhere.example.org",
      authorization: `Bearer ${any.token}`,
    });
    expect(r.headers.get("access-control-allow-origin")).toBe("*");
    expect(r.headers.get("x-content-type-options")).toBe("nosniff");
  });

  it("refuses an entry of CORS_ORIGINS that is not an origin, naming it", async () => {
    await expect(startService({ env: { CORS_ORIGINS: "https://app.example.com/" } })).rejects.toThrow(
      /CORS_ORIGINS: "https:\/\/app\.example\.com\/" is not an origin/,
    );
  });
});
