/**
 * A Qdrant cluster for tests: several processes of one Qdrant binary (QDRANT_BIN, or the one
 * beside the checkout) on loopback ports, each with HTTP, gRPC and peer-to-peer ports and a
 * storage folder of its own. The first node starts the cluster (`--uri`), the others join it
 * (`--bootstrap`); a node can be killed (SIGKILL) and started again on its storage, where it
 * rejoins as the same peer. `close()` stops every node and removes their storage.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { freePort } from "./redis-server.ts";

const READY_MS = 30_000;

export class QdrantNode {
  readonly url: string;
  readonly #bin: string;
  readonly #dir: string;
  readonly #ports: { http: number; grpc: number; p2p: number };
  readonly #bootstrap: string | null;
  #proc: ChildProcess | null = null;
  #output = "";

  constructor(bin: string, dir: string, ports: { http: number; grpc: number; p2p: number }, bootstrap: string | null) {
    this.#bin = bin;
    this.#dir = dir;
    this.#ports = ports;
    this.#bootstrap = bootstrap;
    this.url = `http://127.0.0.1:${ports.http}`;
  }

  /** The address other peers reach this one at. */
  get peerUri(): string {
    return `http://127.0.0.1:${this.#ports.p2p}`;
  }

  get output(): string {
    return this.#output;
  }

  async start(): Promise<void> {
    if (this.#proc) return;
    const env = {
      PATH: process.env.PATH ?? "",
      QDRANT__SERVICE__HOST: "127.0.0.1",
      QDRANT__SERVICE__HTTP_PORT: String(this.#ports.http),
      QDRANT__SERVICE__GRPC_PORT: String(this.#ports.grpc),
      QDRANT__CLUSTER__ENABLED: "true",
      QDRANT__CLUSTER__P2P__PORT: String(this.#ports.p2p),
      QDRANT__STORAGE__STORAGE_PATH: path.join(this.#dir, "storage"),
      QDRANT__STORAGE__SNAPSHOTS_PATH: path.join(this.#dir, "snapshots"),
      QDRANT__TELEMETRY_DISABLED: "true",
      QDRANT__LOG_LEVEL: "WARN",
    };
    const args = ["--uri", this.peerUri, ...(this.#bootstrap ? ["--bootstrap", this.#bootstrap] : [])];
    const proc = spawn(this.#bin, args, { cwd: this.#dir, env, stdio: ["ignore", "pipe", "pipe"] });
    this.#proc = proc;
    const keep = (c: Buffer) => (this.#output = (this.#output + c.toString()).slice(-8000));
    proc.stdout!.on("data", keep);
    proc.stderr!.on("data", keep);
    proc.once("exit", () => {
      if (this.#proc === proc) this.#proc = null;
    });
    const deadline = Date.now() + READY_MS;
    for (;;) {
      if (proc.exitCode !== null || proc.signalCode !== null)
        throw new Error(`qdrant node exited with ${proc.exitCode ?? proc.signalCode}:\n${this.#output}`);
      if (
        await fetch(`${this.url}/readyz`, { signal: AbortSignal.timeout(2000) }).then(
          (r) => r.ok,
          () => false,
        )
      )
        return;
      if (Date.now() > deadline) throw new Error(`Qdrant node ${this.url} not ready within ${READY_MS} ms:\n${this.#output}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** SIGKILL: the node dies as on a power loss; its storage stays for `start()`. */
  async kill(): Promise<void> {
    const proc = this.#proc;
    this.#proc = null;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise((r) => proc.once("exit", r));
    proc.kill("SIGKILL");
    await exited;
  }
}

export class QdrantCluster {
  readonly nodes: QdrantNode[];
  readonly #dirs: string[];

  private constructor(nodes: QdrantNode[], dirs: string[]) {
    this.nodes = nodes;
    this.#dirs = dirs;
  }

  /** Starts `size` nodes, the first founding the cluster, and waits until every one is a peer. */
  static async start(bin: string, size = 3): Promise<QdrantCluster> {
    const nodes: QdrantNode[] = [];
    const dirs: string[] = [];
    const cluster = new QdrantCluster(nodes, dirs);
    try {
      for (let i = 0; i < size; i++) {
        const dir = mkdtempSync(path.join(tmpdir(), `docstore-qdrant-node${i}-`));
        dirs.push(dir);
        const ports = { http: await freePort(), grpc: await freePort(), p2p: await freePort() };
        const node = new QdrantNode(bin, dir, ports, i === 0 ? null : nodes[0]!.peerUri);
        nodes.push(node);
        await node.start();
      }
      await cluster.#waitPeers(size);
      return cluster;
    } catch (err) {
      await cluster.close();
      throw err;
    }
  }

  async #waitPeers(size: number): Promise<void> {
    const deadline = Date.now() + READY_MS;
    for (;;) {
      const peers = await fetch(`${this.nodes[0]!.url}/cluster`).then(
        async (r) => Object.keys(((await r.json()) as { result: { peers: object } }).result.peers).length,
        () => 0,
      );
      if (peers >= size) return;
      if (Date.now() > deadline) throw new Error(`Qdrant cluster: ${peers} of ${size} peers within ${READY_MS} ms`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  /** The state of every replica of a collection's shards, as `node` sees them ("Active", "Dead", ...). */
  async replicaStates(collection: string, node = this.nodes[0]!): Promise<string[]> {
    const res = await fetch(`${node.url}/collections/${encodeURIComponent(collection)}/cluster`);
    if (!res.ok) throw new Error(`Qdrant cluster info of ${collection}: ${res.status}`);
    const { result } = (await res.json()) as { result: { local_shards: { state: string }[]; remote_shards: { state: string }[] } };
    return [...result.local_shards, ...result.remote_shards].map((s) => s.state);
  }

  async close(): Promise<void> {
    for (const node of this.nodes) await node.kill();
    for (const dir of this.#dirs) rmSync(dir, { recursive: true, force: true });
  }
}
