/**
 * Static checks of the deployment files, since no container engine or cluster runs here:
 * docker-compose.yml, the Dockerfile and deploy/kubernetes/*.yaml parse, set only variables the
 * service reads, reference ConfigMap and Secret keys that exist, probe the right endpoints,
 * scale workers on the right Redis list and start files that exist.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { CONFIG_VARIABLES, loadConfig } from "@docstore/shared/config";
import { QUEUES } from "@docstore/shared/jobs";

// Parsed YAML is untyped data; these tests are what gives it a shape.
type Obj = Record<string, any>;

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const k8sDir = path.join(root, "deploy/kubernetes");
const read = (file: string) => readFileSync(path.join(root, file), "utf8");

/** Every document of a YAML file; a syntax error or warning fails the test that reads it. */
function parseYaml(file: string, options: { merge?: boolean } = {}): Obj[] {
  const docs = Array.from(parseAllDocuments(read(file), options));
  for (const doc of docs) {
    expect([...doc.errors, ...doc.warnings].map((e) => `${file}: ${e.message}`)).toEqual([]);
  }
  return docs.map((d) => d.toJS() as Obj | null).filter((d): d is Obj => d !== null);
}

const compose = parseYaml("docker-compose.yml", { merge: true });
const manifestFiles = readdirSync(k8sDir).filter((f) => f.endsWith(".yaml") || f.endsWith(".yml"));
const kustomization = parseYaml("deploy/kubernetes/kustomization.yaml")[0] ?? {};
const objects = manifestFiles
  .filter((f) => f !== "kustomization.yaml")
  .flatMap((file) => parseYaml(`deploy/kubernetes/${file}`).map((o) => ({ file, ...o })) as Obj[]);
const ofKind = (kind: string) => objects.filter((o) => o.kind === kind);
const named = (kind: string, name: string) => ofKind(kind).find((o) => o.metadata?.name === name);

// The image kustomization.yaml rewrites is docstore's own; its containers are docstore's.
const IMAGE = "docstore";
const workloads = [...ofKind("Deployment"), ...ofKind("StatefulSet")];
const docstoreContainers = workloads.flatMap((w) =>
  (w.spec.template.spec.containers as Obj[]).filter((c) => c.image === IMAGE).map((c) => ({ workload: w, container: c })),
);
const runs = (c: Obj, file: string) => [...(c.command ?? []), ...(c.args ?? [])].includes(file);
const apiOf = docstoreContainers.find(({ container }) => runs(container, "packages/api/src/main.ts"));
const workerOf = docstoreContainers.find(({ container }) => runs(container, "packages/worker/src/main.ts"));
const configMap = named("ConfigMap", "docstore-config")?.data as Record<string, string>;

/** The variables a container gets: its ConfigMap (envFrom), then its own env entries. */
function envOf(container: Obj): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = {};
  for (const from of container.envFrom ?? []) {
    if (from.configMapRef) Object.assign(env, named("ConfigMap", from.configMapRef.name)?.data);
  }
  for (const e of container.env ?? []) env[e.name] = e.value;
  return env;
}

/** Files a command line starts (arguments that look like source paths). */
const startedFiles = (argv: string[]) => argv.filter((a) => /^[\w./-]+\.(ts|js|mjs|cjs)$/.test(a));

function millis(duration: string): number {
  let total = 0;
  for (const [, n, unit] of duration.matchAll(/(\d+)(ms|s|m|h)/g)) {
    total += Number(n) * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[unit as "ms" | "s" | "m" | "h"];
  }
  return total;
}

describe("docker-compose.yml", () => {
  const services = (compose[0]?.services ?? {}) as Record<string, Obj>;
  const docstore = Object.entries(services).filter(([, s]) => s.build !== undefined || s.image === "docstore:local");
  // Values as compose sees them with nothing set in the shell or .env: `${VAR:-default}` is the default.
  const interpolate = (value: unknown) =>
    typeof value === "string" ? value.replace(/\$\{\w+(?::?-([^}]*))?\}/g, (_, fallback: string | undefined) => fallback ?? "") : value;
  // The file writes `environment` as a mapping (a list would hide from these checks).
  const environment = (s: Obj): Record<string, unknown> => {
    expect(Array.isArray(s.environment), "environment as a mapping").toBe(false);
    return Object.fromEntries(Object.entries(s.environment ?? {}).map(([k, v]) => [k, interpolate(v)]));
  };

  it("runs the API and the worker from the image it builds", () => {
    expect(docstore.map(([name]) => name).sort()).toEqual(["api", "worker"]);
  });

  it("sets only docstore configuration variables on docstore's containers", () => {
    for (const [name, s] of docstore) {
      const unknown = Object.keys(environment(s)).filter((k) => !CONFIG_VARIABLES.includes(k));
      expect(unknown, name).toEqual([]);
    }
  });

  it("gives every long-running service a health check and every dependency a condition", () => {
    for (const [name, s] of Object.entries(services)) {
      if (s.restart !== "no") expect(s.healthcheck?.test, `${name} healthcheck`).toBeDefined();
      for (const [dep, cond] of Object.entries((s.depends_on ?? {}) as Record<string, Obj>)) {
        expect(services[dep], `${name} depends on ${dep}`).toBeDefined();
        expect(cond.condition, `${name} -> ${dep}`).toMatch(/^service_(healthy|completed_successfully|started)$/);
      }
    }
    for (const [name, s] of docstore) {
      const deps = s.depends_on as Record<string, Obj>;
      for (const dep of ["redis", "qdrant", "minio"]) expect(deps[dep]?.condition, `${name} -> ${dep}`).toBe("service_healthy");
      expect(deps["minio-init"]?.condition).toBe("service_completed_successfully");
    }
    expect(JSON.stringify(services.api?.healthcheck.test)).toContain("/healthz");
  });

  it("configures the distributed mode against the services it starts", () => {
    const api = environment(services.api ?? {});
    expect(api).toMatchObject({ QUEUE: "bullmq", BLOB_STORE: "s3", INDEX: "qdrant", EMBEDDED_WORKER: "false", HOST: "0.0.0.0" });
    expect(String(api.REDIS_URL)).toMatch(/^redis:\/\/redis:/);
    expect(String(api.QDRANT_URL)).toMatch(/^http:\/\/qdrant:6333/);
    expect(String(api.S3_ENDPOINT)).toMatch(/^http:\/\/minio:9000/);
    // The one-shot container creates the very bucket docstore uses.
    expect(environment(services["minio-init"] ?? {}).BUCKET).toBe(api.S3_BUCKET);
    expect(JSON.stringify(services["minio-init"]?.command)).toContain("mc mb --ignore-existing");
    // Redis keeps the queue in an append-only file and never evicts BullMQ's keys.
    expect((services.redis?.command as string[] | undefined)?.join(" ")).toMatch(/--appendonly yes.*--maxmemory-policy noeviction/);
  });

  it("lets each docstore container drain before it is killed", () => {
    for (const [name, s] of docstore) {
      const shutdownMs = Number(environment(s).SHUTDOWN_TIMEOUT_MS ?? 10_000);
      expect(millis(String(s.stop_grace_period ?? "10s")), name).toBeGreaterThan(shutdownMs);
    }
  });
});

describe("Dockerfile", () => {
  const dockerfile = read("Dockerfile").replace(/\\\n/g, " ");
  const lines = dockerfile.split("\n").map((l) => l.trim());
  const runtime = lines.slice(lines.findLastIndex((l) => /^FROM\s/i.test(l)));

  it("starts files that exist in the repository, as do compose, Kubernetes and package.json", () => {
    const cmd = runtime.find((l) => /^CMD\s/i.test(l));
    const argv = JSON.parse(cmd!.replace(/^CMD\s+/i, "")) as string[];
    expect(argv).toEqual(["node", "packages/api/src/main.ts"]);
    const commands: string[][] = [argv];
    for (const s of Object.values(compose[0]?.services ?? {}) as Obj[]) if (Array.isArray(s.command)) commands.push(s.command);
    for (const { container } of docstoreContainers) commands.push([...(container.command ?? []), ...(container.args ?? [])]);
    const scripts = (JSON.parse(read("package.json")) as { scripts: Record<string, string> }).scripts;
    for (const name of ["start:api", "start:worker"]) if (scripts[name]) commands.push(scripts[name].split(/\s+/));
    const files = commands.flatMap(startedFiles);
    expect(files).toContain("packages/worker/src/main.ts");
    for (const file of files) expect(existsSync(path.join(root, file)), file).toBe(true);
  });

  it("copies the manifests and sources of every workspace package, and nothing missing", () => {
    const sources = lines
      .filter((l) => /^COPY\s/i.test(l) && !/--from=/.test(l))
      .flatMap((l) =>
        l
          .replace(/^COPY\s+/i, "")
          .split(/\s+/)
          .filter((w) => !w.startsWith("--"))
          .slice(0, -1),
      );
    for (const src of sources) expect(existsSync(path.join(root, src)), src).toBe(true);
    for (const pkg of readdirSync(path.join(root, "packages"))) {
      expect(sources, pkg).toContain(`packages/${pkg}/package.json`);
      expect(sources, pkg).toContain(`packages/${pkg}/src`);
    }
    // pnpm install refuses to run when a patch it is told to apply is missing.
    const patches = Object.values((parseYaml("pnpm-workspace.yaml")[0]?.patchedDependencies ?? {}) as Record<string, string>);
    for (const file of patches)
      expect(
        sources.some((s) => file.startsWith(`${s.replace(/\/$/, "")}/`)),
        file,
      ).toBe(true);
  });

  it("runs as a non-root user and checks /healthz", () => {
    const user = runtime.findLast((l) => /^USER\s/i.test(l))?.split(/\s+/)[1] ?? "root";
    expect(user).not.toMatch(/^(root|0)(:|$)/);
    expect(runtime.find((l) => /^HEALTHCHECK\s/i.test(l))).toContain("/healthz");
  });
});

describe("deploy/kubernetes", () => {
  it("lists every manifest in kustomization.yaml (the Secret example is created out of band)", () => {
    const listed = new Set(kustomization.resources as string[]);
    const expected = manifestFiles.filter((f) => f !== "kustomization.yaml" && !f.includes(".example."));
    expect([...listed].sort()).toEqual(expected.sort());
  });

  it("sets only docstore configuration variables on docstore's containers", () => {
    expect(apiOf, "an API Deployment").toBeDefined();
    expect(workerOf, "a worker Deployment").toBeDefined();
    for (const { workload, container } of docstoreContainers) {
      expect(workload.kind).toBe("Deployment");
      const unknown = Object.keys(envOf(container)).filter((k) => !CONFIG_VARIABLES.includes(k));
      expect(unknown, `${workload.metadata.name}/${container.name}`).toEqual([]);
      for (const from of container.envFrom ?? []) expect(from.secretRef, "secrets are mapped one by one").toBeUndefined();
    }
    const api = envOf(apiOf!.container);
    expect(api).toMatchObject({ QUEUE: "bullmq", BLOB_STORE: "s3", INDEX: "qdrant", EMBEDDED_WORKER: "false", HOST: "0.0.0.0" });
  });

  it("references only ConfigMap and Secret keys that exist", () => {
    const secret = parseYaml("deploy/kubernetes/secret.example.yaml").find((o) => o.kind === "Secret")!;
    const secrets: Record<string, Obj> = { [secret.metadata.name]: { ...secret.data, ...secret.stringData } };
    const configMaps = Object.fromEntries(ofKind("ConfigMap").map((c) => [c.metadata.name, c.data ?? {}]));
    const refs: string[] = [];
    for (const w of workloads) {
      for (const c of w.spec.template.spec.containers as Obj[]) {
        for (const e of c.env ?? []) {
          const ref = e.valueFrom?.secretKeyRef ?? e.valueFrom?.configMapKeyRef;
          if (!ref) continue;
          const store = e.valueFrom.secretKeyRef ? secrets : configMaps;
          refs.push(ref.key);
          expect(store[ref.name]?.[ref.key], `${w.metadata.name}: ${ref.name}/${ref.key}`).toBeDefined();
        }
        for (const from of c.envFrom ?? []) {
          const name = from.configMapRef?.name ?? from.secretRef?.name;
          expect((from.configMapRef ? configMaps : secrets)[name], `${w.metadata.name}: envFrom ${name}`).toBeDefined();
        }
      }
    }
    for (const auth of ofKind("TriggerAuthentication")) {
      for (const ref of auth.spec.secretTargetRef ?? []) {
        expect(secrets[ref.name]?.[ref.key], `${auth.metadata.name}: ${ref.name}/${ref.key}`).toBeDefined();
      }
    }
    expect(refs).toContain("API_TOKENS");
    // The example holds placeholders only, never a working credential.
    for (const [key, value] of Object.entries(secrets[secret.metadata.name]!)) expect(String(value), key).toContain("REPLACE_ME");
  });

  it("probes the API's /healthz (liveness) and /readyz (readiness) on the port it listens on", () => {
    const { workload, container } = apiOf!;
    expect(container.livenessProbe.httpGet.path).toBe("/healthz");
    expect(container.readinessProbe.httpGet.path).toBe("/readyz");
    if (container.startupProbe) expect(container.startupProbe.httpGet.path).toBe("/healthz");
    const port = container.ports.find((p: Obj) => p.name === container.readinessProbe.httpGet.port) ?? {
      containerPort: container.readinessProbe.httpGet.port,
    };
    expect(String(port.containerPort)).toBe(envOf(container).PORT);

    const labels = workload.spec.template.metadata.labels as Record<string, string>;
    const selects = (selector: Record<string, string>) => Object.entries(selector).every(([k, v]) => labels[k] === v);
    const service = ofKind("Service").find((s) => selects(s.spec.selector));
    expect(service?.spec.ports[0].targetPort).toBe(port.name);
    const hpa = ofKind("HorizontalPodAutoscaler").find((h) => h.spec.scaleTargetRef.name === workload.metadata.name);
    const pdb = ofKind("PodDisruptionBudget").find((p) => selects(p.spec.selector.matchLabels));
    expect(hpa?.spec.minReplicas).toBeGreaterThanOrEqual(2);
    expect(pdb?.spec.minAvailable).toBeLessThan(hpa?.spec.minReplicas);
    expect(workload.spec.replicas, "the HPA owns the replica count").toBeUndefined();
  });

  it("scales workers with KEDA on the ingest queue's BullMQ wait list", () => {
    const prefix = loadConfig(configMap.REDIS_PREFIX ? { REDIS_PREFIX: configMap.REDIS_PREFIX } : {}).queue.prefix;
    const scaled = ofKind("ScaledObject");
    expect(scaled).toHaveLength(1);
    const spec = scaled[0]!.spec;
    expect(spec.scaleTargetRef.name).toBe(workerOf!.workload.metadata.name);
    expect(workerOf!.workload.spec.replicas, "KEDA owns the replica count").toBeUndefined();
    expect(spec.minReplicaCount).toBeGreaterThanOrEqual(1);
    expect(spec.maxReplicaCount).toBeGreaterThan(spec.minReplicaCount);
    const trigger = spec.triggers.find((t: Obj) => t.type === "redis");
    expect(trigger.metadata.listName).toBe(`${prefix}:${QUEUES.ingest.name}:wait`);
    expect(trigger.metadata.listName).toBe("bull:ingest:wait");
    expect(Number(trigger.metadata.listLength)).toBeGreaterThan(0);
    expect(named("TriggerAuthentication", trigger.authenticationRef.name)).toBeDefined();
  });

  it("gives each docstore pod more time to stop than its drain takes", () => {
    for (const { workload, container } of docstoreContainers) {
      const shutdownMs = Number(envOf(container).SHUTDOWN_TIMEOUT_MS ?? 10_000);
      const preStop = container.lifecycle?.preStop?.exec?.command as string[] | undefined;
      const preStopMs = preStop?.[0] === "sleep" ? Number(preStop[1]) * 1000 : 0;
      const graceMs = (workload.spec.template.spec.terminationGracePeriodSeconds ?? 30) * 1000;
      expect(graceMs, workload.metadata.name).toBeGreaterThan(shutdownMs + preStopMs);
    }
  });

  it("runs Qdrant as a cluster the API reaches through a Service", () => {
    const qdrant = ofKind("StatefulSet").find((s) => s.spec.template.spec.containers[0].image.startsWith("qdrant/qdrant"))!;
    const container = qdrant.spec.template.spec.containers[0];
    expect(qdrant.spec.replicas).toBeGreaterThanOrEqual(3);
    expect(container.env.find((e: Obj) => e.name === "QDRANT__CLUSTER__ENABLED")?.value).toBe("true");
    expect(container.args.join("\n")).toMatch(/--bootstrap/);
    const headless = named("Service", qdrant.spec.serviceName)!;
    expect(headless.spec.clusterIP).toBe("None");
    expect(headless.spec.publishNotReadyAddresses).toBe(true);
    expect(headless.spec.ports.map((p: Obj) => p.port)).toContain(6335);
    expect(qdrant.spec.volumeClaimTemplates.length).toBeGreaterThan(0);
    const host = new URL(configMap.QDRANT_URL!).hostname;
    expect(named("Service", host), `QDRANT_URL's host ${host} is a Service`).toBeDefined();
  });
});
