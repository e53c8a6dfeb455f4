/**
 * Types of one operation's input and success answer, read from the generated `paths`: a call
 * written against them stops compiling when the service's document changes its shape.
 */
import type { paths } from "./openapi-types.ts";

export type Path = keyof paths;
export type Method = "get" | "post" | "delete";

/** `"get /healthz"`, … : every operation the document has (an absent method reads as undefined). */
export type OperationKey = { [P in Path]: { [M in Method]: paths[P][M] extends undefined ? never : `${M} ${P}` }[Method] }[Path];

export type Operation<P extends Path, M extends Method> = Exclude<paths[P][M], undefined>;

/** The query parameters (optional as a whole when each of them is). */
export type QueryOf<P extends Path, M extends Method> =
  Operation<P, M> extends { parameters: { query?: infer Q } } ? Exclude<Q, undefined> : never;

/** The JSON body; `requestBody?` when every field may come in the query string instead. */
export type JsonBodyOf<P extends Path, M extends Method> =
  Operation<P, M> extends { requestBody?: { content: { "application/json": infer B } } } ? B : never;

export type FormOf<P extends Path, M extends Method> =
  Operation<P, M> extends { requestBody?: { content: { "multipart/form-data": infer F } } } ? F : never;

type SuccessStatus = 200 | 201 | 202;
/** The JSON body of the operation's success answer. */
export type SuccessOf<P extends Path, M extends Method> =
  Operation<P, M> extends { responses: infer R }
    ? { [S in keyof R & SuccessStatus]: R[S] extends { content: { "application/json": infer B } } ? B : never }[keyof R & SuccessStatus]
    : never;
