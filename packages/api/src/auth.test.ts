import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ALL_SCOPES, UnauthorizedError } from "@docstore/shared";
import { startJwksServer, type JwksServer } from "@docstore/shared/testing";
import { createAuthenticator } from "./auth.ts";
import { createJwtVerifier } from "./jwt.ts";

const TOKEN = "docstore-token-0123456789abcdef";
const tokens = [{ token: TOKEN, scopes: new Set(ALL_SCOPES), collections: null }];

let idp: JwksServer;
beforeAll(async () => {
  idp = await startJwksServer();
});
afterAll(() => idp?.close());

describe("authenticating the requests of one connection", () => {
  it("answers the header the connection last authenticated with, and checks every other one", async () => {
    const authenticate = createAuthenticator(tokens);
    const connection = {};
    const principal = await authenticate(`Bearer ${TOKEN}`, connection);
    expect(await authenticate(`Bearer ${TOKEN}`, connection)).toBe(principal);
    // Near misses on the same connection: the last character, a prefix, a longer header, another case.
    for (const header of [
      `Bearer ${TOKEN.slice(0, -1)}x`,
      `Bearer ${TOKEN.slice(0, -1)}`,
      `Bearer ${TOKEN}0`,
      `bearer ${TOKEN.toUpperCase()}`,
      "",
      "Bearer",
    ]) {
      await expect(authenticate(header, connection), header).rejects.toThrow(UnauthorizedError);
    }
    await expect(authenticate(undefined, connection)).rejects.toThrow(/missing bearer token/);
    // A token sent without its scheme: the message says what to send, and does not repeat the token.
    const bare = authenticate(TOKEN, connection);
    await expect(bare).rejects.toThrow(
      "the Authorization header does not start with Bearer: send 'Authorization: Bearer <token>', not the token alone or another scheme",
    );
    await expect(authenticate("Bearer", connection)).rejects.toThrow("no single token after Bearer: send 'Authorization: Bearer <token>'");
    // The remembered header still works after the refusals, and another connection is checked afresh.
    expect(await authenticate(`Bearer ${TOKEN}`, connection)).toBe(principal);
    await expect(authenticate(`Bearer ${TOKEN}x`, {})).rejects.toThrow(UnauthorizedError);
  });

  it("checks a JWT at every request of a connection, so that one that expired is refused", async () => {
    const config = { jwksUrl: idp.url, issuer: idp.issuer, audience: idp.audience, collectionsClaim: null };
    const authenticate = createAuthenticator(tokens, createJwtVerifier(config));
    const connection = {};
    // Expired 28 s ago: within the verifier's 30 s of clock tolerance for one to two seconds more.
    const jwt = await idp.sign({ sub: "svc-1", scope: "read" }, { expiresIn: -28 });
    expect((await authenticate(`Bearer ${jwt}`, connection)).id).toBe("jwt:svc-1");
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    await expect(authenticate(`Bearer ${jwt}`, connection)).rejects.toThrow(UnauthorizedError);
    // A static token on the same connection afterwards is still found.
    expect((await authenticate(`Bearer ${TOKEN}`, connection)).id).toMatch(/^token:/);
  });
});
