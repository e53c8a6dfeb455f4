/**
 * Bearer tokens that are JWTs, checked with `jose` against the identity provider's JWKS
 * (AUTH_JWKS_URL), its issuer (AUTH_ISSUER) and this service's audience (AUTH_AUDIENCE).
 * Scopes come from the `scope` claim (space-separated; words other than read, write and admin
 * are ignored), collections from the claim AUTH_COLLECTIONS_CLAIM names, when set.
 */
import { createHash } from "node:crypto";
import { createRemoteJWKSet, decodeProtectedHeader, errors, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from "jose";
import { ALL_SCOPES, COLLECTION_PATTERN, UnauthorizedError, UnavailableError, type JwtConfig, type Scope } from "@docstore/shared";
import type { Principal } from "./access.ts";

/** Signatures by public keys only: a shared secret would have to be in the JWKS for all to read. */
const ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA", "Ed25519"];

export type VerifyJwt = (token: string) => Promise<Principal>;

/** Three base64url parts joined by dots: what a signed JWT looks like. */
export const looksLikeJwt = (token: string) => /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(token);

export function createJwtVerifier(config: JwtConfig): VerifyJwt {
  const jwks = createRemoteJWKSet(new URL(config.jwksUrl), { timeoutDuration: 3000 });
  // A key set that cannot be fetched is the identity provider's outage (503), not the client's
  // fault; a kid that the fetched set lacks is the client's (401).
  const keys: JWTVerifyGetKey = async (header, token) => {
    try {
      return await jwks(header, token);
    } catch (err) {
      if (err instanceof errors.JWKSNoMatchingKey || err instanceof errors.JWKSMultipleMatchingKeys) throw err;
      throw new UnavailableError(`cannot read the JWKS at AUTH_JWKS_URL: ${(err as Error).message}`, err);
    }
  };
  return async (token) => {
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, keys, {
        issuer: config.issuer,
        audience: config.audience,
        algorithms: ALGORITHMS,
        requiredClaims: ["exp"],
        clockTolerance: 30,
      }));
    } catch (err) {
      if (err instanceof UnavailableError) throw err;
      throw new UnauthorizedError(`invalid bearer token: ${why(err, token, config)}`);
    }
    return {
      id:
        typeof payload.sub === "string"
          ? `jwt:${payload.sub}`
          : `jwt:sha256:${createHash("sha256").update(token).digest("hex").slice(0, 12)}`,
      scopes: scopesOf(payload.scope),
      collections: config.collectionsClaim === null ? null : collectionsOf(payload[config.collectionsClaim], config.collectionsClaim),
    };
  };
}

function scopesOf(claim: unknown): ReadonlySet<Scope> {
  const words = typeof claim === "string" ? claim.split(/\s+/) : Array.isArray(claim) ? claim : [];
  return new Set(words.filter((w): w is Scope => ALL_SCOPES.includes(w as Scope)));
}

/** A missing claim grants no collection; entries that are neither names nor prefixes match none. */
function collectionsOf(claim: unknown, name: string): string[] {
  if (claim === undefined) return [];
  const entries = typeof claim === "string" ? claim.split(/\s+/) : claim;
  if (!Array.isArray(entries) || !entries.every((e) => typeof e === "string")) {
    throw new UnauthorizedError(
      `invalid bearer token: the claim "${name}" (AUTH_COLLECTIONS_CLAIM) must be an array of collection names or a space-separated string`,
    );
  }
  return entries.filter((e) => COLLECTION_PATTERN.test(e));
}

/** What is wrong with the token, in words that help its holder, and never the token itself. */
function why(err: unknown, token: string, config: JwtConfig): string {
  if (err instanceof errors.JWTExpired) {
    const exp = typeof err.payload.exp === "number" ? ` at ${new Date(err.payload.exp * 1000).toISOString()}` : "";
    return `the JWT expired${exp}`;
  }
  if (err instanceof errors.JWTClaimValidationFailed) {
    if (err.claim === "iss") return `the JWT's issuer ("iss") is not AUTH_ISSUER (${config.issuer})`;
    if (err.claim === "aud") return `the JWT's audience ("aud") does not include AUTH_AUDIENCE (${config.audience})`;
    if (err.reason === "missing") return `the JWT has no "${err.claim}" claim`;
    return `the JWT's "${err.claim}" claim: ${err.message}`;
  }
  if (err instanceof errors.JWSSignatureVerificationFailed) return "the JWT's signature does not verify with the key its kid names";
  if (err instanceof errors.JWKSNoMatchingKey)
    return `no key in the JWKS (AUTH_JWKS_URL) matches the JWT's kid ${JSON.stringify(kidOf(token) ?? null)} and alg`;
  if (err instanceof errors.JOSEAlgNotAllowed) return `the JWT's alg is not one of ${ALGORITHMS.join(", ")}`;
  return `malformed JWT: ${(err as Error).message}`;
}

function kidOf(token: string): string | undefined {
  try {
    return decodeProtectedHeader(token).kid;
  } catch {
    return undefined;
  }
}
