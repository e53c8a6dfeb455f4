/**
 * Errors sent between threads (worker_threads' postMessage). A structured clone of an Error
 * keeps its message and stack but not its class or its own fields, so a NotFoundError thrown
 * in one thread would arrive as a plain Error in the other (and be answered as a 500). An error
 * crosses as its class name, message, stack, own fields and cause; the other side rebuilds the
 * class of that name from errors.ts (or a built-in error class), with the same fields.
 */
import * as errors from "./errors.ts";

/** An error as it crosses a thread boundary: plain data a structured clone carries whole. */
export interface WireError {
  name: string;
  message: string;
  stack?: string | undefined;
  /** Its own enumerable fields (kind, extras, code, reason, position, ...). */
  fields: Record<string, unknown>;
  cause?: WireError | undefined;
}

type ErrorClass = abstract new (...args: never[]) => Error;

const BUILT_IN: ErrorClass[] = [Error, TypeError, RangeError, SyntaxError, ReferenceError, EvalError, URIError];

/** The classes an error is rebuilt as, by name: every error class errors.ts exports, and the built-in ones. */
const CLASSES = new Map<string, ErrorClass>(
  [
    ...BUILT_IN,
    ...(Object.values(errors) as unknown[]).filter((v): v is ErrorClass => typeof v === "function" && v.prototype instanceof Error),
  ].map((c) => [c.name, c]),
);

/** How deep a chain of causes is carried. */
const MAX_CAUSES = 4;

/** `err` (anything thrown) as data to post to another thread. */
export function toWire(err: unknown, depth = 0): WireError {
  if (!(err instanceof Error)) return { name: "Error", message: String(err), fields: {} };
  const fields: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(err)) {
    if (key === "name" || key === "message" || key === "stack" || key === "cause") continue;
    if (cloneable(value)) fields[key] = value;
  }
  const cause = err.cause !== undefined && depth < MAX_CAUSES ? toWire(err.cause, depth + 1) : undefined;
  return { name: err.name, message: err.message, stack: err.stack, fields, cause };
}

function cloneable(value: unknown): boolean {
  try {
    structuredClone(value);
    return true;
  } catch {
    return false;
  }
}

/**
 * The error `wire` stands for, as an instance of the class it was thrown as (built without
 * running its constructor: the fields are those it had) or, for a class this thread does not
 * know (a library's), an Error with the same name and fields. Its stack is where it was thrown.
 */
export function fromWire(wire: WireError): Error {
  const known = CLASSES.get(wire.name) ?? Error;
  // Error's constructor with the class's prototype: a real Error (what `Error.isError` and
  // test matchers check), without the class's constructor, which could not take these fields.
  const options = wire.cause === undefined ? undefined : { cause: fromWire(wire.cause) };
  const err = Reflect.construct(Error, [wire.message, options], known) as Error;
  if (wire.stack !== undefined)
    Object.defineProperty(err, "stack", { value: wire.stack, writable: true, configurable: true, enumerable: false });
  Object.assign(err, wire.fields);
  // AppError and DocumentError keep their name as an own field; a built-in error's is its prototype's.
  if (err.name !== wire.name)
    Object.defineProperty(err, "name", { value: wire.name, writable: true, configurable: true, enumerable: true });
  return err;
}
