import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { NextFunction, Request, Response } from "express";
import { ALL_SCOPES, ForbiddenError, UnauthorizedError, type ApiToken, type Scope } from "@docstore/shared";

const digest = (s: string) => createHash("sha256").update(s).digest();

/** Looks a bearer token up in constant time: every configured token is compared, always. */
export function createAuthenticator(tokens: ApiToken[]) {
  const known = tokens.map((t) => ({ digest: digest(t.token), scopes: t.scopes }));
  return (header: string | undefined): ReadonlySet<Scope> => {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "");
    if (!match) throw new UnauthorizedError("missing bearer token: send 'Authorization: Bearer <token>'");
    const presented = digest(match[1]!);
    let scopes: ReadonlySet<Scope> | null = null;
    for (const t of known) if (timingSafeEqual(t.digest, presented) && scopes === null) scopes = t.scopes;
    if (scopes === null) throw new UnauthorizedError("unknown bearer token");
    return scopes;
  };
}

export type Authenticate = ReturnType<typeof createAuthenticator>;

/** Express middleware demanding one scope. */
export function requireScope(authenticate: Authenticate, scope: Scope) {
  return (req: Request, res: Response, next: NextFunction) => {
    const scopes = authenticate(req.headers.authorization);
    if (!scopes.has(scope)) throw new ForbiddenError(`this token lacks the '${scope}' scope`);
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
  return { token: { token, scopes: new Set(ALL_SCOPES) }, created };
}
