/**
 * JWT bearer tokens against a JWKS served by the test, with keys the test makes: scopes from
 * the `scope` claim, collections from the claim AUTH_COLLECTIONS_CLAIM names, and a precise
 * 401 for each way a token can be wrong. Static API_TOKENS keep working beside them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startJwksServer, type JwksServer } from "@docstore/shared/testing";
import { removeDir, startService, uniqueName, type Service } from "./harness.ts";

const STATIC = "static-jwt-suite-0123456789abcdef";
let idp: JwksServer;
let svc: Service;
const mine = uniqueName("jwt");
const theirs = uniqueName("jwt");

beforeAll(async () => {
  idp = await startJwksServer();
  svc = await startService({
    env: {
      AUTH_JWKS_URL: idp.url,
      AUTH_ISSUER: idp.issuer,
      AUTH_AUDIENCE: idp.audience,
      AUTH_COLLECTIONS_CLAIM: "docstore_collections",
      API_TOKENS: `${STATIC}:read+write`,
    },
  });
});

afterAll(async () => {
  await svc?.stop();
  if (svc) removeDir(svc.dataDir);
  await idp?.close();
});

describe("JWT bearer tokens", () => {
  it("grants the scopes of the scope claim on the collections of the configured claim", async () => {
    const token = await idp.sign({ sub: "team-a-bot", scope: "openid read write", docstore_collections: [mine] });
    const load = await svc.request("POST", "/load_text_to_collection", {
      token,
      query: { collection_name: mine, wait: "true" },
      json: { text: "granite and basalt" },
    });
    expect(load.status, JSON.stringify(load.body)).toBe(200);
    const search = await svc.request("GET", "/get_relevant_documents", { token, query: { query: "granite" } });
    expect(search.status).toBe(200);
    expect(search.body.results.map((r: { collection_name: string }) => r.collection_name)).toEqual([mine]);

    // A static token beside it, loading into another collection.
    expect(
      (
        await svc.request("POST", "/load_text_to_collection", {
          token: STATIC,
          query: { collection_name: theirs, wait: "true" },
          json: { text: "granite" },
        })
      ).status,
    ).toBe(200);
    const listed = await svc.request("GET", "/get_list_of_collection", { token });
    expect(listed.body.collections.map((c: { name: string }) => c.name)).toEqual([mine]);
    const other = await svc.request("GET", "/get_relevant_documents", { token, query: { query: "granite", collection_names: theirs } });
    expect(other.status).toBe(403);
    expect(other.body.detail).toBe(`this token may not use the collection '${theirs}'; it may use: ${mine}`);

    const drop = await svc.request("DELETE", "/delete_collection", { token, query: { collection_name: mine } });
    expect(drop.status).toBe(403);
    expect(drop.body.detail).toBe("this token lacks the 'admin' scope");
  });

  it("grants no collection to a token without the collections claim", async () => {
    const token = await idp.sign({ sub: "nobody", scope: "read write" });
    const listed = await svc.request("GET", "/get_list_of_collection", { token });
    expect(listed.status).toBe(200);
    expect(listed.body.collections).toEqual([]);
    expect((await svc.request("GET", "/get_relevant_documents", { token, query: { query: "granite" } })).body.results).toEqual([]);
    const load = await svc.request("POST", "/load_text_to_collection", { token, query: { collection_name: mine }, json: { text: "x" } });
    expect(load.status).toBe(403);
    expect(load.body.detail).toBe(`this token may not use the collection '${mine}'; it may use: none`);
  });

  it.each<[string, () => Promise<string>, RegExp]>([
    [
      "expired",
      () => idp.sign({ sub: "s", scope: "read", docstore_collections: [mine] }, { expiresIn: -3600 }),
      /^invalid bearer token: the JWT expired at \d{4}-/,
    ],
    [
      "of another issuer",
      () => idp.sign({ sub: "s", scope: "read" }, { issuer: "https://elsewhere.test/" }),
      /issuer \("iss"\) is not AUTH_ISSUER/,
    ],
    [
      "for another audience",
      () => idp.sign({ sub: "s", scope: "read" }, { audience: "another-service" }),
      /audience \("aud"\) does not include AUTH_AUDIENCE/,
    ],
    [
      "signed by another key under the served kid",
      () => idp.sign({ sub: "s", scope: "read" }, { forgedSignature: true }),
      /signature does not verify/,
    ],
    [
      "signed by a key the JWKS lacks",
      () => idp.sign({ sub: "s", scope: "read" }, { unknownKid: "rotated-away" }),
      /no key in the JWKS \(AUTH_JWKS_URL\) matches the JWT's kid "rotated-away"/,
    ],
    ["without exp", () => idp.sign({ sub: "s", scope: "read" }, { expiresIn: null }), /the JWT has no "exp" claim/],
    ["whose header is not JSON", async () => "bm90IGpzb24.bm90IGpzb24.c2ln", /^invalid bearer token: malformed JWT/],
  ])("refuses a token %s with a 401 and problem details", async (_what, make, detail) => {
    const res = await svc.request("GET", "/get_list_of_collection", { token: await make() });
    expect(res.status).toBe(401);
    expect(res.headers.get("content-type")).toMatch(/application\/problem\+json/);
    expect(res.headers.get("www-authenticate")).toBe('Bearer realm="docstore"');
    expect(res.body).toMatchObject({ status: 401, title: "Unauthorized" });
    expect(res.body.detail).toMatch(detail);
  });

  it("prints no generated token when JWTs and API_TOKENS are configured, and logs no JWT", async () => {
    expect(svc.output).not.toMatch(/docstore ready at \S+ token/);
    expect(svc.output).not.toContain("eyJ");
  });
});
