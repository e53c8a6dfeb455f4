import { NotFoundError, closestName } from "@docstore/shared";
import { visibleTo, type Principal } from "./access.ts";
import type { AppContext } from "./context.ts";

/**
 * The 404 for collections that do not exist, each with the closest name the token may use when
 * one is close ("did you mean"), as unknown fields get; names the token may not use are never told.
 */
export async function unknownCollections(ctx: AppContext, principal: Principal, missing: string[]): Promise<NotFoundError> {
  const known = visibleTo(
    principal,
    (await ctx.services.catalog.listCollections()).map((c) => c.name),
    (c) => c,
  );
  const named = missing.map((name) => {
    const meant = closestName(name, known);
    return meant ? `${name} (did you mean ${meant}?)` : name;
  });
  return new NotFoundError(`unknown collection${missing.length > 1 ? "s" : ""}: ${named.join(", ")}`);
}
