import type { Request, Response } from "express";
import type { z } from "zod";
import type { Scope } from "@docstore/shared";

type Out<T> = T extends z.ZodType ? z.output<T> : undefined;

/** What a handler gets: the request's input, already validated against the route's schemas. */
export interface Input<Q, B, M> {
  query: Out<Q>;
  body: Out<B>;
  /** A multipart route's file: the mount refuses a request without one. */
  file: M extends Multipart ? Express.Multer.File : undefined;
  req: Request;
  res: Response;
}

/** A multipart/form-data upload: the field that must carry the one file, and the other fields. */
export interface Multipart {
  file: string;
  /** Each text field's description; multer leaves their values in `req.body` for the handler. */
  fields: Record<string, string>;
}

/**
 * One operation of the API. mount.ts serves it on Express and openapi.ts describes it,
 * both from these fields, so the two cannot disagree on a path, method, scope or schema.
 */
export interface Route<
  Q extends z.ZodObject | undefined = z.ZodObject | undefined,
  B extends z.ZodType | undefined = z.ZodType | undefined,
  M extends Multipart | undefined = Multipart | undefined,
> {
  method: "get" | "post" | "delete";
  path: string;
  summary: string;
  /** Longer documentation of the operation (Markdown), shown under the summary in /docs. */
  description?: string;
  /** The group the operation is listed under in /docs. */
  tag?: string;
  /** The scope a bearer token needs; absent for the probes and the description (no token). */
  scope?: Scope;
  /** Validated from the query string (documented as query parameters). */
  query?: Q;
  /**
   * Set when the query's fields may come in a JSON body as well, the body's winning: a GET may
   * carry one (Python's requests sends it). Query string and body are then validated together
   * against `query`; the document shows the fields listed here in a JSON body, each optional,
   * and the others as query parameters.
   */
  queryInBody?: readonly string[];
  /** Validated from the JSON body. */
  body?: B;
  /** Set for a multipart/form-data upload, instead of `body`. */
  multipart?: M;
  /** Documentation only: responses are not validated. */
  response: z.ZodType;
  /** The media type of a success; application/json unless said. */
  contentType?: string;
  /** The success status when it is not 200. */
  status?: number;
  /** Documentation only: other statuses answered with the same body, and when (e.g. `200` of `wait=true`). */
  alsoAnswers?: Record<number, string>;
  /**
   * Documentation only: the problem statuses particular to this route, and when. Bad input (400),
   * the token's (401, 403), a dependency down (503) and other client errors are added to every
   * route they apply to.
   */
  problems?: Record<number, string>;
  /** Documentation only: a request and its answer, shown in /docs; openapi.test.ts checks them against the schemas. */
  example?: { query?: Record<string, unknown>; body?: unknown; response?: unknown };
  // A method, not a function property, so that a route with specific schemas is a Route.
  handle(input: Input<Q, B, M>): Promise<void> | void;
}

/** Infers a route's input types from its schemas, and checks `queryInBody` names query fields. */
export const route = <
  Q extends z.ZodObject | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
  M extends Multipart | undefined = undefined,
>(
  r: Route<Q, B, M> & { queryInBody?: readonly (keyof NonNullable<Q>["shape"])[] },
): Route<Q, B, M> => r;
