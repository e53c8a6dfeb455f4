/** Where a started service keeps its raw copies, for tests that look at them directly. */
import path from "node:path";
import { S3BlobStore } from "@docstore/shared/blob/s3";
import type { Service } from "./harness.ts";

/** The S3 server of a service started with BLOB_STORE=s3, as the blob store the service uses. */
export function serviceS3(svc: Service): S3BlobStore {
  return new S3BlobStore({
    endpoint: svc.env.S3_ENDPOINT,
    region: svc.env.S3_REGION!,
    bucket: svc.env.S3_BUCKET,
    accessKeyId: svc.env.S3_ACCESS_KEY_ID,
    secretAccessKey: svc.env.S3_SECRET_ACCESS_KEY,
    forcePathStyle: true,
  });
}

/** The folder of raw copies kept as files in DATA_DIR (small ones live in the catalog instead). */
export const blobFilesDir = (svc: Service) => path.join(svc.dataDir, "blobs", "files");
