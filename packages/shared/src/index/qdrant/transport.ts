/**
 * How the Qdrant client's requests travel: node:http (or https) on kept-alive connections
 * instead of `fetch`. The client (@qdrant/js-client-rest) builds each request and reads each
 * answer as before; the `transport` option it takes (patches/) sends the request it built and
 * hands back what it reads of an answer: status, headers, text. `fetch` cost the API more CPU
 * a search than the rest of the search (docs/benchmarks.md).
 */
import http from "node:http";
import https from "node:https";

/** The part of a fetch Response the client reads. */
export interface TransportResponse {
  status: number;
  statusText: string;
  ok: boolean;
  url: string;
  headers: { get(name: string): string | null };
  text(): Promise<string>;
}

/** What the client hands the transport: a fetch RequestInit, its body JSON text or none. */
export type Transport = (url: string, init: RequestInit) => Promise<TransportResponse>;

function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error && reason.name === "AbortError" ? reason : new DOMException("This operation was aborted", "AbortError");
}

/** An error of a request sent on a kept-alive connection that the server had closed meanwhile. */
class StaleConnection extends Error {
  readonly error: Error;
  constructor(error: Error) {
    super(error.message, { cause: error });
    this.error = error;
  }
}

type Agents = Record<"http:" | "https:", http.Agent>;

/**
 * A transport keeping up to `maxSockets` connections per Qdrant node open between requests. An
 * aborted request (the client's timeout) fails with an AbortError, as fetch's does; a refused
 * or reset connection fails with the socket's error, which has no status (so callers read it
 * as Qdrant out of reach). A request whose kept-alive connection turns out closed by Qdrant
 * (it closes idle ones) is sent once more, on another connection: every request docstore sends
 * can be sent twice (writes are upserts of fixed ids and deletions by filter).
 */
export function httpTransport({ maxSockets = 25 }: { maxSockets?: number } = {}): Transport {
  const agents: Agents = {
    "http:": new http.Agent({ keepAlive: true, maxSockets }),
    "https:": new https.Agent({ keepAlive: true, maxSockets }),
  };
  return async (url, init) => {
    try {
      return await send(agents, url, init);
    } catch (err) {
      if (!(err instanceof StaleConnection)) throw err;
      return send(agents, url, init).catch((again: unknown) => {
        throw again instanceof StaleConnection ? again.error : again;
      });
    }
  };
}

function send(agents: Agents, url: string, init: RequestInit): Promise<TransportResponse> {
  return new Promise<TransportResponse>((resolve, reject) => {
    const target = new URL(url);
    const protocol = target.protocol === "https:" ? "https:" : "http:";
    const signal = init.signal ?? undefined;
    if (signal?.aborted) return reject(abortError(signal));
    // The client hands a Headers object; anything else a fetch init allows is read through one.
    const given = init.headers instanceof Headers ? init.headers : new Headers(init.headers ?? {});
    const headers: Record<string, string> = {};
    given.forEach((value, key) => {
      headers[key] = value;
    });
    const body = init.body ?? undefined;
    if (body !== undefined && typeof body !== "string") return reject(new TypeError("Qdrant transport: a body is JSON text"));
    if (body !== undefined) headers["content-length"] = String(Buffer.byteLength(body));
    const request = protocol === "https:" ? https.request : http.request;
    let answered = false;
    const req = request(target, { method: init.method ?? "GET", agent: agents[protocol], headers }, (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("error", reject);
      res.on("end", () => {
        signal?.removeEventListener("abort", onAbort);
        const text = Buffer.concat(chunks).toString("utf8");
        const status = res.statusCode ?? 0;
        resolve({
          status,
          statusText: res.statusMessage ?? "",
          ok: status >= 200 && status < 300,
          url,
          headers: {
            get: (name) => {
              const value = res.headers[name.toLowerCase()];
              return value === undefined ? null : Array.isArray(value) ? value.join(", ") : value;
            },
          },
          text: () => Promise.resolve(text),
        });
      });
    });
    const onAbort = () => req.destroy(abortError(signal!));
    signal?.addEventListener("abort", onAbort, { once: true });
    req.on("error", (err: NodeJS.ErrnoException) => {
      signal?.removeEventListener("abort", onAbort);
      const stale = req.reusedSocket && !answered && !signal?.aborted && (err.code === "ECONNRESET" || err.code === "EPIPE");
      reject(stale ? new StaleConnection(err) : err);
    });
    req.end(body);
  });
}
