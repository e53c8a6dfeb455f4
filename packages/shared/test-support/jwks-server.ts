/**
 * A stand-in identity provider for tests: key pairs made here, the public one served as a JWKS
 * over loopback HTTP, and tokens signed with either. `sign` makes a valid token by default;
 * its options make each kind of bad one (expired, another issuer or audience, a key the JWKS
 * does not hold, a signature by another key under the served key's kid, no exp).
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWTPayload } from "jose";

export interface SignOptions {
  issuer?: string;
  audience?: string;
  /** Seconds from now; negative for an expired token; null for none. */
  expiresIn?: number | null;
  /** Sign with a key the JWKS does not hold, under this kid. */
  unknownKid?: string;
  /** Sign with a key the JWKS does not hold, under the served key's kid. */
  forgedSignature?: boolean;
}

export interface JwksServer {
  readonly url: string;
  readonly issuer: string;
  readonly audience: string;
  /** JWKS requests served. */
  readonly fetches: number;
  sign(claims: JWTPayload, options?: SignOptions): Promise<string>;
  close(): Promise<void>;
}

const ALG = "ES256";

export async function startJwksServer(issuer = "https://idp.test/", audience = "docstore-test"): Promise<JwksServer> {
  const served = await generateKeyPair(ALG, { extractable: true });
  const other = await generateKeyPair(ALG);
  const kid = "test-key-1";
  const jwks = { keys: [{ ...(await exportJWK(served.publicKey)), kid, alg: ALG, use: "sig" }] };
  let fetches = 0;
  const server = createServer((_req, res) => {
    fetches++;
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(jwks));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  const sign = async (claims: JWTPayload, options: SignOptions = {}) => {
    const key: CryptoKey = options.unknownKid || options.forgedSignature ? other.privateKey : served.privateKey;
    const jwt = new SignJWT(claims)
      .setProtectedHeader({ alg: ALG, kid: options.unknownKid ?? kid, typ: "JWT" })
      .setIssuer(options.issuer ?? issuer)
      .setAudience(options.audience ?? audience)
      .setIssuedAt();
    const expiresIn = options.expiresIn === undefined ? 600 : options.expiresIn;
    if (expiresIn !== null) jwt.setExpirationTime(Math.floor(Date.now() / 1000) + expiresIn);
    return jwt.sign(key);
  };

  return {
    url: `http://127.0.0.1:${port}/.well-known/jwks.json`,
    issuer,
    audience,
    get fetches() {
      return fetches;
    },
    sign,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
