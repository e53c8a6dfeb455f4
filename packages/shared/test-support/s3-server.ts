/**
 * A real S3-protocol server for tests (s3rver, from npm): on a free loopback port, its data in a
 * temporary folder. `down()` and `restart()` simulate an outage (the process is killed, as in a
 * crash) and the recovery on the same port with the same data, so a client built before the
 * outage must find the server again by itself.
 *
 * s3rver runs in a child process started with `--openssl-legacy-provider`: its list
 * continuation tokens are DES-encrypted, and without that provider Node 24's OpenSSL refuses DES,
 * so every truncated listing (more than 1000 keys) would answer 500.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { createRequire } from "node:module";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";

/** s3rver's built-in account (it does not verify SigV4 signatures, only the key id). */
const ACCESS_KEY_ID = "S3RVER";
const SECRET_ACCESS_KEY = "S3RVER";

// The child reports its port over IPC, and exits when the IPC channel closes, so a test
// process that dies never leaves a server behind.
// s3rver's deleteObject also removes the folders a delete leaves empty, racing a put into the
// same folder (keys share their first segments): the put's file then cannot be opened, and the
// unhandled error ends the server (seen in the Redis outage test, where refused loads remove
// their blobs while others are stored). Here deletes remove the object's files only.
const CHILD = `
const [modulePath, options] = process.argv.slice(1);
const S3rver = require(modulePath);
const fs = require("fs/promises");
const Store = require(require("path").join(require("path").dirname(modulePath), "stores", "filesystem.js"));
Store.prototype.deleteObject = async function (bucket, key) {
  await Promise.all(["object", "object.md5", "metadata.json"].map((kind) =>
    fs.unlink(this.getResourcePath(bucket, key, kind)).catch((err) => { if (err.code !== "ENOENT") throw err; })));
};
process.on("disconnect", () => process.exit(0));
new S3rver({ ...JSON.parse(options), address: "127.0.0.1", silent: true }).run().then(
  (address) => process.send({ port: address.port }),
  (err) => { console.error(err); process.exit(1); },
);
`;

export interface S3ServerConfig {
  endpoint: string;
  region: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  forcePathStyle: boolean;
}

export interface S3TestServer {
  endpoint: string;
  bucket: string;
  port: number;
  /** Shaped like `config.blobStore.s3`, ready for `new S3BlobStore(config)`. */
  config: S3ServerConfig;
  /** Kills the server (connections are cut, as in a crash); the data is kept. */
  down(): Promise<void>;
  /** Listens again on the same port with the same data (after `down()`, or as a bounce). */
  restart(): Promise<void>;
  /** Stops for good and removes the data. */
  stop(): Promise<void>;
}

async function launch(directory: string, bucket: string, port: number): Promise<{ child: ChildProcess; port: number }> {
  const modulePath = createRequire(import.meta.url).resolve("s3rver");
  const options = JSON.stringify({ port, directory, configureBuckets: [{ name: bucket }] });
  const child = spawn(process.execPath, ["--openssl-legacy-provider", "-e", CHILD, modulePath, options], {
    stdio: ["ignore", "ignore", "inherit", "ipc"],
  });
  const exited = once(child, "exit").then(([code]) => {
    throw new Error(`s3rver exited with code ${code} before listening`);
  });
  const ready = once(child, "message").then(([message]) => (message as { port: number }).port);
  try {
    return { child, port: await Promise.race([ready, exited]) };
  } catch (err) {
    child.kill("SIGKILL");
    throw err;
  } finally {
    exited.catch(() => {}); // it may exit later, when a test takes it down
  }
}

async function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, "exit");
  child.kill("SIGKILL");
  await exited;
}

export async function startS3Server(opts: { bucket?: string } = {}): Promise<S3TestServer> {
  const bucket = opts.bucket ?? "docstore-test";
  const directory = await mkdtemp(path.join(tmpdir(), "docstore-s3rver-"));
  let current: ChildProcess | null;
  let port: number;
  try {
    ({ child: current, port } = await launch(directory, bucket, 0));
  } catch (err) {
    await rm(directory, { recursive: true, force: true });
    throw err;
  }

  const down = async () => {
    const child = current;
    current = null;
    if (child) await kill(child);
  };

  const endpoint = `http://127.0.0.1:${port}`;
  return {
    endpoint,
    bucket,
    port,
    config: { endpoint, region: "us-east-1", bucket, accessKeyId: ACCESS_KEY_ID, secretAccessKey: SECRET_ACCESS_KEY, forcePathStyle: true },
    down,
    async restart() {
      await down();
      current = (await launch(directory, bucket, port)).child;
    },
    async stop() {
      await down();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
