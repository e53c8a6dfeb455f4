import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UnauthorizedError, UnavailableError } from "@docstore/shared";
import { freePort, startJwksServer, type JwksServer } from "@docstore/shared/testing";
import { createJwtVerifier, looksLikeJwt } from "./jwt.ts";

let idp: JwksServer;
beforeAll(async () => {
  idp = await startJwksServer();
});
afterAll(() => idp?.close());

const config = (collectionsClaim: string | null = "collections") => ({
  jwksUrl: idp.url,
  issuer: idp.issuer,
  audience: idp.audience,
  collectionsClaim,
});

describe("JWT verification", () => {
  it("takes scopes from the scope claim and collections from the configured claim", async () => {
    const verify = createJwtVerifier(config());
    const token = await idp.sign({ sub: "svc-1", scope: "openid read write profile", collections: ["kb", "team-*", "../bad"] });
    expect(looksLikeJwt(token)).toBe(true);
    const p = await verify(token);
    expect(p.id).toBe("jwt:svc-1");
    expect([...p.scopes].sort()).toEqual(["read", "write"]);
    expect(p.collections).toEqual(["kb", "team-*"]);
  });

  it("grants no collection when the claim is missing, and every one when no claim is configured", async () => {
    const token = await idp.sign({ sub: "svc-2", scope: "read" });
    expect((await createJwtVerifier(config())(token)).collections).toEqual([]);
    expect((await createJwtVerifier(config(null))(token)).collections).toBeNull();
  });

  it("refuses a collections claim that is not a list of names", async () => {
    const token = await idp.sign({ sub: "svc-3", scope: "read", collections: { kb: true } });
    await expect(createJwtVerifier(config())(token)).rejects.toThrow(UnauthorizedError);
  });

  it("answers 503 (unavailable) when the JWKS cannot be fetched, and 401 for a bad token", async () => {
    const dead = createJwtVerifier({ ...config(), jwksUrl: `http://127.0.0.1:${await freePort()}/jwks.json` });
    const token = await idp.sign({ sub: "svc-4", scope: "read" });
    await expect(dead(token)).rejects.toThrow(UnavailableError);
    await expect(dead(token)).rejects.toThrow(/AUTH_JWKS_URL/);
    await expect(createJwtVerifier(config())("a.b.c")).rejects.toThrow(UnauthorizedError);
  });
});
