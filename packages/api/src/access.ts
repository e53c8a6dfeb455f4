/**
 * Who a request comes from and which collections it may use. A token restricted to some
 * collections (API_TOKENS or a JWT claim) is refused every other one with a 403, whatever the
 * operation, and sees only its own where an operation spans "all" of them.
 */
import type { Request } from "express";
import { ForbiddenError, type Scope } from "@docstore/shared";

export interface Principal {
  /** Safe to log and to key a rate limit by: a static token's fingerprint, or a JWT's issuer and subject. */
  id: string;
  scopes: ReadonlySet<Scope>;
  /** Names, or prefixes ending in `*`; null: every collection. */
  collections: readonly string[] | null;
}

/** The principal that the route's token check set; a route without a scope has none. */
export function principalOf(req: Request): Principal {
  // Reaching this on a route without a scope is a bug in the route table, not a client error.
  if (!req.principal) throw new Error(`${req.method} ${req.path}: no token was checked for this route`);
  return req.principal;
}

export function mayUse(principal: Principal, collection: string): boolean {
  if (principal.collections === null) return true;
  return principal.collections.some((p) => (p.endsWith("*") ? collection.startsWith(p.slice(0, -1)) : collection === p));
}

/** 403 for the first of `collections` the principal may not use. */
export function assertMayUse(principal: Principal, collections: readonly string[]): void {
  const refused = collections.find((c) => !mayUse(principal, c));
  if (refused === undefined) return;
  throw new ForbiddenError(
    `this token may not use the collection '${refused}'; it may use: ${principal.collections?.join(", ") || "none"}`,
  );
}

/** Of `collections`, those the principal may use: what "all" means for a restricted token. */
export function visibleTo<T>(principal: Principal, collections: readonly T[], name: (c: T) => string): T[] {
  return principal.collections === null ? [...collections] : collections.filter((c) => mayUse(principal, name(c)));
}

/** 403 unless the principal may use every collection (an operation whose answer spans them all). */
export function assertUnrestricted(principal: Principal, what: string): void {
  if (principal.collections !== null)
    throw new ForbiddenError(`${what} covers every collection; this token may use only: ${principal.collections.join(", ") || "none"}`);
}

/**
 * Checks the collections an operation's validated input names, by the fields that name them:
 * `collection_name` and `collection_names`. Every route's input passes here, so an operation
 * cannot forget the check.
 */
export function assertInputCollections(principal: Principal, input: unknown): void {
  if (principal.collections === null || input === null || typeof input !== "object") return;
  const { collection_name: one, collection_names: many } = input as { collection_name?: unknown; collection_names?: unknown };
  if (typeof one === "string") assertMayUse(principal, [one]);
  if (Array.isArray(many))
    assertMayUse(
      principal,
      many.filter((n): n is string => typeof n === "string"),
    );
}
