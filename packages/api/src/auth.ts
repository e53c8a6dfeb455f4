import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { NextFunction, Request, Response } from "express";
import { ALL_SCOPES, ForbiddenError, UnauthorizedError, type ApiToken, type Scope } from "@docstore/shared";
import type { Principal } from "./access.ts";
import type { AppContext } from "./context.ts";
import { looksLikeJwt, type VerifyJwt } from "./jwt.ts";

const digest = (s: string) => createHash("sha256").update(s).digest();

/**
 * `connection` (the request's socket), when given, lets a keep-alive connection that presents
 * the header it last authenticated with skip the hashing (API_TOKENS only: a JWT is checked
 * every time, as it expires).
 */
export type Authenticate = (header: string | undefined, connection?: object) => Promise<Principal>;

/**
 * Whether `presented` equals `known`, in a time that depends only on `presented`'s length: no
 * early exit at the first difference, and no length of `known` told by when the loop ends.
 */
function sameText(presented: string, known: string): boolean {
  let diff = presented.length ^ known.length;
  for (let i = 0; i < presented.length; i++) diff |= presented.charCodeAt(i) ^ (known.charCodeAt(i % known.length) | 0);
  return diff === 0;
}

/** Why an Authorization header holds no bearer token, without repeating what it holds (a token, perhaps). */
function headerProblem(header: string | undefined): string {
  const send = "send 'Authorization: Bearer <token>'";
  const given = header?.trim() ?? "";
  if (given === "") return `missing bearer token: ${send}`;
  if (/^Bearer(\s|$)/i.test(given)) return `no single token after Bearer: ${send}`;
  return `the Authorization header does not start with Bearer: ${send}, not the token alone or another scheme`;
}

/**
 * Finds who a bearer token is: one of API_TOKENS, looked up in constant time (the SHA-256 of
 * the token is compared with every configured token's, always, so neither the time taken nor
 * a length mismatch tells how close a guess came), else a JWT when `verifyJwt` is given. A
 * connection presenting again the header it last authenticated with is answered from memory,
 * the header compared by `sameText`, which tells nothing more.
 */
export function createAuthenticator(tokens: readonly ApiToken[], verifyJwt: VerifyJwt | null = null): Authenticate {
  const known = tokens.map((t) => {
    const d = digest(t.token);
    // The fingerprint names the token in logs and rate-limit keys; the token itself is never written.
    const principal: Principal = { id: `token:${d.toString("hex").slice(0, 12)}`, scopes: t.scopes, collections: t.collections };
    return { digest: d, principal };
  });
  const remembered = new WeakMap<object, { header: string; principal: Principal }>();
  return async (header, connection) => {
    const last = connection && remembered.get(connection);
    if (last && header !== undefined && sameText(header, last.header)) return last.principal;
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "");
    if (!match) throw new UnauthorizedError(headerProblem(header));
    const token = match[1]!;
    const presented = digest(token);
    let found: Principal | null = null;
    for (const t of known) if (timingSafeEqual(t.digest, presented) && found === null) found = t.principal;
    if (found) {
      if (connection && header !== undefined) remembered.set(connection, { header, principal: found });
      return found;
    }
    if (verifyJwt && looksLikeJwt(token)) return verifyJwt(token);
    throw new UnauthorizedError("unknown bearer token");
  };
}

/**
 * Middleware demanding one scope: finds the principal, counts the request against its rate
 * limit, then checks the scope. Collections are checked once the input is validated (mount.ts).
 */
export function requireScope(ctx: AppContext, scope: Scope) {
  return async (req: Request, res: Response, next: NextFunction) => {
    const principal = await ctx.authenticate(req.headers.authorization, req.socket);
    req.principal = principal;
    await ctx.rateLimiter?.consume(principal);
    if (!principal.scopes.has(scope)) throw new ForbiddenError(`this token lacks the '${scope}' scope`);
    res.setHeader("Cache-Control", "no-store");
    next();
  };
}

/**
 * With no API_TOKENS, embedded mode keeps one generated admin token in DATA_DIR so that a
 * restart keeps working with the token printed the first time.
 */
export function loadOrCreateToken(file: string): { token: ApiToken; created: boolean } {
  let token: string;
  let created = false;
  try {
    token = readFileSync(file, "utf8").trim();
  } catch {
    token = `ds_${randomBytes(24).toString("base64url")}`;
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, `${token}\n`, { mode: 0o600 });
    created = true;
  }
  return { token: { token, scopes: new Set(ALL_SCOPES), collections: null }, created };
}
