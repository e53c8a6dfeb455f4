/**
 * No value from a request reaches SQL, an index `where`, a Qdrant filter, a file path or an S3
 * key as anything but a value, end to end: metadata and filter values carrying SQL and `where`
 * fragments, wildcards, NUL, path climbs and URL-encoded separators round-trip exactly and
 * match only themselves; look-alike collections and ids stay apart; names and ids that could
 * climb are refused; no file appears outside DATA_DIR and none outside it is read. Per backend:
 * SQLite catalog, LanceDB and fs blobs (embedded); Redis catalog and S3 (distributed); Qdrant
 * when QDRANT_URL or QDRANT_BIN names one. (The adapters' own contracts try the same values
 * without the API's validation in front: test-support/catalog-contract.ts, index-contract.ts.)
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import Database from "better-sqlite3";
import { HOSTILE_VALUES, LOOKALIKE_IDS, filterValue, qdrantSource } from "@docstore/shared/testing";
import { startService, uniqueName, type Service, type StartOptions } from "./harness.ts";

const SETUPS: { name: string; options: StartOptions }[] = [
  { name: "embedded: SQLite catalog, LanceDB, fs blobs", options: {} },
  { name: "distributed: Redis catalog, S3 blobs, LanceDB", options: { mode: "distributed", workers: 1, env: { CATALOG: "redis" } } },
];
if (qdrantSource() !== null)
  SETUPS.push({
    name: "distributed: Redis catalog, S3 blobs, Qdrant",
    options: { mode: "distributed", workers: 1, index: "qdrant", env: { CATALOG: "redis" } },
  });
else console.log("injection through Qdrant: skipped: set QDRANT_BIN or QDRANT_URL (the Qdrant stand-in runs the index contract)");

const metadataOf = (v: string) => ({ status: v, note: `pre${v}post`, tags: [v, "plain"] });

for (const setup of SETUPS) {
  describe(`request values stay values (${setup.name})`, () => {
    let root: string;
    let svc: Service;
    const secret = `SENTINEL-${randomUUID()}`;
    const c = uniqueName("inj");
    /** Every answer's text, to show that nothing outside DATA_DIR was ever read into one. */
    const answers: string[] = [];

    const request = async (...args: Parameters<Service["request"]>) => {
      const r = await svc.request(...args);
      answers.push(JSON.stringify(r.body));
      return r;
    };
    const tag = async (collection: string, filter: string) => {
      const r = await request("GET", "/get_content_by_tag", { query: { collection_name: collection, tag_info: filter } });
      expect(r.status, `${filter}: ${JSON.stringify(r.body)}`).toBe(200);
      return (r.body.documents as { doc_id: string }[]).map((d) => d.doc_id).sort();
    };
    const search = async (collections: string[], filter: string) => {
      const r = await request("POST", "/get_relevant_documents", {
        query: { query: "hostile value", k: 100 },
        json: { collection_names: collections, metadata: filter },
      });
      expect(r.status, `${filter}: ${JSON.stringify(r.body)}`).toBe(200);
      return [...new Set((r.body.results as { doc_id: string }[]).map((h) => h.doc_id))].sort();
    };

    beforeAll(async () => {
      // DATA_DIR inside a folder of its own, beside a file that must never be read or written.
      root = mkdtempSync(path.join(tmpdir(), "docstore-injection-"));
      writeFileSync(path.join(root, "secret.txt"), secret);
      mkdirSync(path.join(root, "data"));
      svc = await startService({ ...setup.options, dataDir: path.join(root, "data") });
      const documents = HOSTILE_VALUES.map((v, i) => ({ doc_id: `h${i}`, text: `hostile value number ${i}`, metadata: metadataOf(v) }));
      const loaded = await request("POST", "/load_texts_to_collection", {
        query: { collection_name: c, wait: "true" },
        json: { documents },
      });
      expect(loaded.status, JSON.stringify(loaded.body)).toBe(200);
      expect(loaded.body.documents.map((d: any) => d.status)).toEqual(documents.map(() => "ready"));
    }, 90_000);

    afterAll(async () => {
      await svc.stop();
      rmSync(root, { recursive: true, force: true });
    });

    it("metadata round-trips exactly, in the catalog and in the index", async () => {
      for (const [i, v] of HOSTILE_VALUES.entries()) {
        const status = await request("GET", "/get_document_status", { query: { collection_name: c, id_value: `h${i}` } });
        expect(status.body.metadata, JSON.stringify(v)).toStrictEqual(metadataOf(v));
      }
      const all = await request("GET", "/get_content_by_tag", { query: { collection_name: c } });
      const byId = new Map((all.body.documents as { doc_id: string; metadata: unknown }[]).map((d) => [d.doc_id, d.metadata]));
      for (const [i, v] of HOSTILE_VALUES.entries()) expect(byId.get(`h${i}`), JSON.stringify(v)).toStrictEqual(metadataOf(v));
    });

    it("filter values match only the documents holding them", async () => {
      const ids = HOSTILE_VALUES.map((_, i) => `h${i}`);
      const containing = (v: string) => ids.filter((_, j) => `pre${HOSTILE_VALUES[j]}post`.toLowerCase().includes(v.toLowerCase())).sort();
      for (const [i, v] of HOSTILE_VALUES.entries()) {
        const e = filterValue(v);
        expect(await tag(c, `status=${e}`), `status=${v}`).toEqual([`h${i}`]);
        expect(await search([c], `status=${e}`), `search status=${v}`).toEqual([`h${i}`]);
        expect(await tag(c, `tags=${e}`), `tags=${v}`).toEqual([`h${i}`]);
        expect(await tag(c, `status!=${e}`), `status!=${v}`).toEqual(ids.filter((id) => id !== `h${i}`).sort());
        expect(await tag(c, `noteLIKE${e}`), `noteLIKE${v}`).toEqual(containing(v));
        if (!v.includes(",")) expect(await tag(c, `statusIN${e},no-such-value`), `statusIN${v}`).toEqual([`h${i}`]);
      }
    });

    it("look-alike collections and document ids stay apart", async () => {
      const names = [`${c}_x`, `${c}yx`, `${c}-x`, `${c}__x`];
      for (const name of names) {
        const documents = LOOKALIKE_IDS.map((id) => ({ doc_id: id, text: `hostile value lookalike ${id}`, metadata: { owner: name } }));
        const r = await request("POST", "/load_texts_to_collection", {
          query: { collection_name: name, wait: "true" },
          json: { documents },
        });
        expect(r.status, JSON.stringify(r.body)).toBe(200);
      }
      expect(
        (await request("DELETE", "/delete_document_from_collection", { query: { collection_name: `${c}_x`, id_value: "a_c" } })).status,
      ).toBe(200);
      expect((await request("DELETE", "/delete_collection", { query: { collection_name: `${c}yx` } })).status).toBe(200);
      expect(await tag(`${c}_x`, "")).toEqual(LOOKALIKE_IDS.filter((id) => id !== "a_c").sort());
      for (const name of [`${c}-x`, `${c}__x`]) {
        expect(await tag(name, ""), name).toEqual([...LOOKALIKE_IDS].sort());
        expect(await search([name], `owner=${name}`), name).toEqual([...LOOKALIKE_IDS].sort());
      }
      expect((await request("GET", "/get_list_of_documents_names", { query: { collection_name: `${c}yx` } })).status).toBe(404);
      const listed = (await request("GET", "/get_list_of_collection")).body.collections.map((s: { name: string }) => s.name);
      expect(listed.filter((n: string) => n.startsWith(`${c}`)).sort()).toEqual([c, `${c}_x`, `${c}-x`, `${c}__x`].sort());
    });

    it("names and ids that could climb or smuggle a separator are refused before any store sees them", async () => {
      const climbs = [
        "../secret.txt",
        "../../secret.txt",
        "..%2Fsecret.txt",
        "..",
        ".",
        "a/../../secret.txt",
        "%2e%2e%2fsecret.txt",
        "a\u0000b",
        "' OR 1=1 --",
      ];
      for (const bad of climbs) {
        const load = await request("POST", "/load_text_to_collection", { query: { collection_name: bad }, json: { text: "x" } });
        expect(load.status, bad).toBe(400);
        const withId = await request("POST", "/load_text_to_collection", {
          query: { collection_name: c, doc_id: bad },
          json: { text: "x" },
        });
        expect(withId.status, bad).toBe(400);
        for (const [method, route] of [
          ["GET", "/get_list_of_documents_names"],
          ["GET", "/get_content_by_tag"],
          ["DELETE", "/delete_collection"],
        ] as const) {
          expect((await request(method, route, { query: { collection_name: bad } })).status, `${route} ${bad}`).toBe(400);
        }
        expect((await request("GET", "/get_document_status", { query: { collection_name: c, id_value: bad } })).status, bad).toBe(400);
        expect(
          (await request("DELETE", "/delete_document_from_collection", { query: { collection_name: c, id_value: bad } })).status,
          bad,
        ).toBe(400);
      }
      // A file name is kept as the document's name, never used as a path.
      const form = new FormData();
      // Over 64 KiB, so that the fs store keeps it as a file of its own.
      form.append(
        "file",
        new Blob([`a file named to climb out. ${"hostile value ".repeat(6000)}`], { type: "text/plain" }),
        "../../secret.txt",
      );
      form.append("metadata", JSON.stringify(metadataOf("../../secret.txt")));
      const upload = await request("POST", "/load_document_to_collection", {
        query: { collection_name: c, doc_id: "upload-1", wait: "true" },
        form,
      });
      expect(upload.status, JSON.stringify(upload.body)).toBe(200);
      const status = await request("GET", "/get_document_status", { query: { collection_name: c, id_value: "upload-1" } });
      // The form reader keeps the base name only; either way it is a name, not a path.
      expect(status.body).toMatchObject({ filename: "secret.txt", metadata: metadataOf("../../secret.txt") });
    });

    it("nothing was written outside DATA_DIR or read from outside it; blob keys carry no request text", async () => {
      expect(readdirSync(root).sort()).toEqual(["data", "secret.txt"]);
      expect(readFileSync(path.join(root, "secret.txt"), "utf8")).toBe(secret);
      expect(answers.join("\n")).not.toContain(secret);
      // Blob keys are <collection>/<8 hex>/<job id>, whatever the request said.
      const key = /^[A-Za-z0-9][A-Za-z0-9_-]*\/[0-9a-f]{8}\/[0-9a-f-]{36}$/;
      const files = path.join(root, "data", "blobs", "files");
      const local = readdirSync(path.join(root, "data"), { recursive: true }).map(String);
      expect(local.filter((p) => p.includes("secret") || p.includes(".."))).toEqual([]);
      let keys: string[];
      if (svc.env.S3_ENDPOINT) {
        const listing = await (await fetch(`${svc.env.S3_ENDPOINT}/${svc.env.S3_BUCKET}?list-type=2&max-keys=1000`)).text();
        keys = [...listing.matchAll(/<Key>([^<]*)<\/Key>/g)].map((m) => m[1]!);
        expect(keys.length).toBeGreaterThan(0);
      } else {
        keys = readdirSync(files, { recursive: true, withFileTypes: true })
          .filter((e) => e.isFile())
          .map((e) => path.relative(files, path.join(e.parentPath, e.name)));
        expect(keys.length).toBeGreaterThan(0);
        // Small blobs live in the catalog's SQLite file, under the same keys.
        const db = new Database(path.join(root, "data", "catalog.sqlite"), { readonly: true });
        keys.push(
          ...db
            .prepare<[], { key: string }>("SELECT key FROM blobs")
            .all()
            .map((r) => r.key),
        );
        db.close();
      }
      for (const k of keys) expect(k).toMatch(key);
    });
  });
}
