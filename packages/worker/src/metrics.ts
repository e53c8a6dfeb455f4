/**
 * The worker process's Prometheus metrics on their own small HTTP server (WORKER_METRICS_PORT;
 * 0 turns it off): jobs handled and dropped, and the process figures. No token: like a
 * Kubernetes probe, it is meant for the cluster's network, not the public one.
 */
import { createServer, type Server } from "node:http";
import { Counter, Registry, collectDefaultMetrics } from "prom-client";
import { listen, type DroppedJob, type QueueName } from "@docstore/shared";

export interface WorkerMetrics {
  dropped: DroppedJob;
  handled(queue: QueueName, jobs: number, outcome: "done" | "retry"): void;
  registry: Registry;
}

export function createWorkerMetrics(): WorkerMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: "docstore_worker_" });
  const dropped = new Counter({
    name: "docstore_jobs_dropped_total",
    help: "Job payloads dropped because they did not match their queue's schema (never retried)",
    labelNames: ["queue"] as const,
    registers: [registry],
  });
  const handled = new Counter({
    name: "docstore_jobs_handled_total",
    help: "Jobs handled by outcome: done (settled) or retry (handed back)",
    labelNames: ["queue", "outcome"] as const,
    registers: [registry],
  });
  for (const outcome of ["done", "retry"]) handled.inc({ queue: "ingest", outcome }, 0);
  dropped.inc({ queue: "ingest" }, 0);
  return {
    registry,
    dropped: (queue) => dropped.inc({ queue }),
    handled: (queue, jobs, outcome) => handled.inc({ queue, outcome }, jobs),
  };
}

/**
 * Serves GET /metrics; resolves with the server once it listens (port 0 picks a free one), or
 * rejects with a ConfigError naming WORKER_METRICS_PORT or HOST.
 */
export async function serveMetrics(metrics: WorkerMetrics, port: number, host: string): Promise<Server> {
  const server = createServer((req, res) => {
    if (req.method !== "GET" || req.url !== "/metrics") {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found: GET /metrics\n");
      return;
    }
    metrics.registry.metrics().then(
      (text) => res.writeHead(200, { "content-type": metrics.registry.contentType }).end(text),
      (err: unknown) => res.writeHead(500, { "content-type": "text/plain" }).end(`${(err as Error).message}\n`),
    );
  });
  await listen(server, port, host, "WORKER_METRICS_PORT");
  return server;
}
