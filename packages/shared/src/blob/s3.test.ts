import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createServer as createHttpServer } from "node:http";
import { createServer, type Server, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { S3Client } from "@aws-sdk/client-s3";
import { S3BlobStore, type S3BlobOptions } from "./s3.ts";
import { NotFoundError, UnavailableError } from "../errors.ts";
import { startS3Server, type S3TestServer } from "../../test-support/s3-server.ts";
import { describeBlobStoreContract, listKeys, pattern } from "../../test-support/blob-contract.ts";

const MiB = 1024 * 1024;
const same = (a: Uint8Array, b: Uint8Array) => Buffer.from(a).equals(Buffer.from(b));

let s3: S3TestServer;
beforeAll(async () => {
  s3 = await startS3Server();
});
afterAll(async () => {
  await s3.stop();
});

// A 5 MiB threshold and parts (S3's smallest) send the contract's large blob through multipart.
describeBlobStoreContract("S3BlobStore on s3rver", async () => {
  const store = new S3BlobStore({ ...s3.config, multipartThreshold: 5 * MiB, partSize: 5 * MiB });
  return { store, cleanup: async () => store.close() };
});

/** A client that records the commands it sends, and lets a test rewrite an answer. */
function watchedClient(options: S3BlobOptions, rewrite?: (command: string, output: Record<string, unknown>) => void) {
  const client = new S3Client({
    endpoint: options.endpoint,
    region: options.region,
    forcePathStyle: options.forcePathStyle,
    credentials: { accessKeyId: options.accessKeyId ?? "", secretAccessKey: options.secretAccessKey ?? "" },
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
  });
  const sent: string[] = [];
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const command = String(context.commandName).replace(/Command$/, "");
      sent.push(command);
      const result = await next(args);
      rewrite?.(command, result.output as unknown as Record<string, unknown>);
      return result;
    },
    { step: "initialize" },
  );
  return { client, sent };
}

describe("S3BlobStore", () => {
  it("sends a large body as a real multipart upload, and a small one as one PutObject", async () => {
    const { client, sent } = watchedClient(s3.config);
    const store = new S3BlobStore({ ...s3.config, client, multipartThreshold: 8 * MiB, partSize: 5 * MiB });
    const large = pattern(11 * MiB + 7, 3);
    await store.put("mp/doc/large", large);
    expect(sent.filter((c) => c !== "UploadPart")).toEqual(["CreateMultipartUpload", "CompleteMultipartUpload"]);
    expect(sent.filter((c) => c === "UploadPart")).toHaveLength(3);
    expect(same(await store.get("mp/doc/large"), large)).toBe(true);

    sent.length = 0;
    await store.put("mp/doc/small", pattern(8 * MiB - 1));
    expect(sent).toEqual(["PutObject"]);
    client.destroy();
  });

  it("reports keys that DeleteObjects could not delete instead of ignoring them", async () => {
    const { client } = watchedClient(s3.config, (command, output) => {
      if (command === "DeleteObjects") output.Errors = [{ Key: "dp/x/a", Code: "InternalError", Message: "injected" }];
    });
    const store = new S3BlobStore({ ...s3.config, client });
    await store.put("dp/x/a", new Uint8Array([1]));
    const err = await store.deletePrefix("dp").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnavailableError);
    expect((err as Error).message).toMatch(/1 of 1 objects under dp\/ not deleted/);
    expect(((err as Error).cause as Error).message).toMatch(/InternalError: injected/);
    client.destroy();
  });

  it("answers Unavailable, not NotFound, for a missing bucket or unknown credentials", async () => {
    for (const options of [
      { ...s3.config, bucket: "no-such-bucket" },
      { ...s3.config, accessKeyId: "UNKNOWN" },
    ]) {
      const store = new S3BlobStore(options);
      await expect(store.get("x/y")).rejects.toBeInstanceOf(UnavailableError);
      await expect(store.put("x/y", new Uint8Array([1]))).rejects.toBeInstanceOf(UnavailableError);
      await expect(store.ping()).rejects.toBeInstanceOf(UnavailableError);
      store.close();
    }
  });

  it("fails fast with UnavailableError while the server is down, writes nothing, and recovers by itself", { timeout: 30_000 }, async () => {
    const own = await startS3Server();
    const store = new S3BlobStore(own.config);
    try {
      const before = pattern(1000, 5);
      await store.put("out/doc/before", before);

      await own.down();
      for (const attempt of [
        () => store.put("out/doc/during", pattern(1000, 6)),
        () => store.put("out/doc/during-large", pattern(9 * MiB, 6)), // the multipart path
        () => store.get("out/doc/before"),
        () => store.delete("out/doc/before"),
        () => store.deletePrefix("out"),
        () => listKeys(store, "out"),
        () => store.ping(),
      ]) {
        const err = await attempt().catch((e: unknown) => e);
        expect(err).toBeInstanceOf(UnavailableError);
        expect((err as Error).message).toMatch(/^blob store unavailable: /);
        expect((err as Error).cause).toBeDefined();
      }

      await own.restart();
      await store.ping();
      expect(same(await store.get("out/doc/before"), before)).toBe(true);
      await expect(store.get("out/doc/during")).rejects.toBeInstanceOf(NotFoundError);
      await expect(store.get("out/doc/during-large")).rejects.toBeInstanceOf(NotFoundError);
      await store.put("out/doc/after", pattern(1000, 7));
      expect(await listKeys(store, "out")).toEqual(["out/doc/after", "out/doc/before"]);
    } finally {
      store.close();
      await own.stop();
    }
  });

  it("takes a bare 404 from something that is not S3 for a wrong endpoint, not a missing key", async () => {
    const notS3 = createHttpServer((_req, res) => res.writeHead(404).end());
    await new Promise<void>((resolve) => notS3.listen(0, "127.0.0.1", resolve));
    const store = new S3BlobStore({ ...s3.config, endpoint: `http://127.0.0.1:${(notS3.address() as AddressInfo).port}` });
    try {
      await expect(store.get("x/y")).rejects.toBeInstanceOf(UnavailableError);
      await expect(store.ping()).rejects.toBeInstanceOf(UnavailableError);
    } finally {
      store.close();
      notS3.closeAllConnections();
      await new Promise((resolve) => notS3.close(resolve));
    }
  });

  it("gives up on a server that accepts connections but never answers", { timeout: 30_000 }, async () => {
    const sockets = new Set<Socket>();
    const silent: Server = createServer((socket) => {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const endpoint = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
    const store = new S3BlobStore({ ...s3.config, endpoint, idleTimeoutMs: 500, maxAttempts: 2 });
    try {
      await expect(store.get("x/y")).rejects.toBeInstanceOf(UnavailableError);
      await expect(store.put("x/y", new Uint8Array([1]))).rejects.toBeInstanceOf(UnavailableError);
    } finally {
      store.close();
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});

describe("S3BlobStore under a burst", () => {
  it("sends more puts at once than it has connections: each waits its turn, none times out", { timeout: 60_000 }, async () => {
    // Each PUT answered after 1.5 s: with the connection timeout at 1 s, a put that waited for
    // a connection in the SDK's pool (not in the store's own queue) would time out.
    let open = 0;
    let most = 0;
    const slow = createHttpServer((req, res) => {
      open += 1;
      most = Math.max(most, open);
      req.resume();
      req.on("end", () =>
        setTimeout(() => {
          open -= 1;
          res.writeHead(200, { ETag: '"e"' }).end();
        }, 1500),
      );
    });
    await new Promise<void>((resolve) => slow.listen(0, "127.0.0.1", resolve));
    const store = new S3BlobStore({
      ...s3.config,
      endpoint: `http://127.0.0.1:${(slow.address() as AddressInfo).port}`,
      connectTimeoutMs: 1000,
      maxAttempts: 1,
    });
    try {
      const results = await Promise.allSettled(Array.from({ length: 120 }, (_, i) => store.put(`burst/k${i}`, new Uint8Array([i]))));
      expect(results.filter((r) => r.status === "rejected").map((r) => String((r as PromiseRejectedResult).reason))).toEqual([]);
      expect(most).toBeLessThanOrEqual(50);
    } finally {
      store.close();
      slow.closeAllConnections();
      await new Promise((resolve) => slow.close(resolve));
    }
  });
});
