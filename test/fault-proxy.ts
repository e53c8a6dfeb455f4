/**
 * An HTTP proxy in front of the real service that counts what clients send and, when a test
 * asks, answers in the service's place (a 429 or 503 with Retry-After) or holds an exchange
 * (before or after the service saw it), as an overloaded service or a dropped connection would.
 * It changes nothing it forwards.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface Seen {
  method: string;
  path: string;
  query: URLSearchParams;
  body: Buffer;
  /** The JSON body, when it is one. */
  json: any;
  /** The answer's status: the service's, the proxy's own, or undefined while held. */
  status?: number;
}

export type Action =
  | { reply: number; retryAfter?: string }
  /** Never forwarded: the service does not see it. */
  | { hold: "request" }
  /** Forwarded, and the service's answer kept from the client. */
  | { hold: "response" };

export interface FaultProxy {
  url: string;
  seen: Seen[];
  /** Decides each request in turn; undefined forwards it. */
  rule: (req: Seen) => Action | undefined;
  /** Resolves once as many exchanges are held at once. */
  held(count: number): Promise<void>;
  /** Sends the held answers of the service (held requests stay held). */
  release(): void;
  /** Forgets what was seen, forwards everything again, and drops whatever is held. */
  reset(): void;
  close(): Promise<void>;
}

export async function startFaultProxy(target: string): Promise<FaultProxy> {
  const upstream = new URL(target);
  const holders: { count: number; resolve: () => void }[] = [];
  const heldAnswers: (() => void)[] = [];
  const heldRequests: http.ServerResponse[] = [];
  const heldCount = () => heldAnswers.length + heldRequests.length;
  const hold = () => {
    for (const h of holders.filter((h) => heldCount() >= h.count)) {
      h.resolve();
      holders.splice(holders.indexOf(h), 1);
    }
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://proxy");
      const body = Buffer.concat(chunks);
      let json: unknown;
      try {
        json = JSON.parse(body.toString("utf8"));
      } catch {
        json = undefined;
      }
      const seen: Seen = { method: req.method ?? "GET", path: url.pathname, query: url.searchParams, body, json };
      proxy.seen.push(seen);
      const action = proxy.rule(seen);
      if (action && "reply" in action) {
        seen.status = action.reply;
        const headers: Record<string, string> = { "content-type": "application/problem+json" };
        if (action.retryAfter !== undefined) headers["retry-after"] = action.retryAfter;
        res.writeHead(action.reply, headers);
        res.end(
          JSON.stringify({
            type: "about:blank",
            title: http.STATUS_CODES[action.reply],
            status: action.reply,
            detail: "injected by the test proxy",
            instance: url.pathname,
          }),
        );
        return;
      }
      if (action?.hold === "request") {
        heldRequests.push(res);
        return hold();
      }
      const forward = http.request(
        {
          host: upstream.hostname,
          port: upstream.port,
          method: req.method,
          path: req.url,
          headers: { ...req.headers, host: upstream.host },
        },
        (up) => {
          const parts: Buffer[] = [];
          up.on("data", (c: Buffer) => parts.push(c));
          up.on("end", () => {
            seen.status = up.statusCode;
            const answer = () => {
              res.writeHead(up.statusCode ?? 502, up.headers);
              res.end(Buffer.concat(parts));
            };
            if (action?.hold !== "response") return answer();
            heldAnswers.push(answer);
            hold();
          });
        },
      );
      forward.on("error", (err) => {
        res.writeHead(502, { "content-type": "text/plain" });
        res.end(String(err));
      });
      forward.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const proxy: FaultProxy = {
    url: `http://127.0.0.1:${port}`,
    seen: [],
    rule: () => undefined,
    held: (count) => (heldCount() >= count ? Promise.resolve() : new Promise((resolve) => holders.push({ count, resolve }))),
    release: () => {
      for (const answer of heldAnswers.splice(0)) answer();
    },
    reset: () => {
      proxy.rule = () => undefined;
      proxy.seen.length = 0;
      holders.length = 0;
      for (const res of heldRequests.splice(0)) res.destroy();
      heldAnswers.length = 0;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return proxy;
}
