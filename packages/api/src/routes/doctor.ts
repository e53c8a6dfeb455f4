import { runDoctor, type DoctorReport } from "@docstore/shared";
import { principalOf, visibleTo } from "../access.ts";
import { audit } from "../audit.ts";
import type { AppContext } from "../context.ts";
import { route, type Route } from "../route.ts";
import * as s from "../schemas.ts";

/** `POST /doctor`: the consistency check of catalog, blob store and index (shared/doctor). */
export function doctorRoutes(ctx: AppContext): Route[] {
  const { catalog, index, blobs, queue } = ctx.services;
  return [
    route({
      method: "post",
      path: "/doctor",
      summary: "Check that catalog, raw copies and index agree, and repair what does not",
      description:
        "Compares every document's catalog record with its raw copy in the blob store and its chunks in the index, looks for " +
        "documents whose job no queue holds, and for index documents and raw copies nothing names. Reports each kind of " +
        "disagreement with a count and examples; with `repair=true` it repairs them (`found` and `repaired` say what each " +
        "kind means and what its repair does). Report only by default. Safe beside traffic: what looks wrong is looked at " +
        "again before anything is done, and each repair applies only to the version judged. It reads every document's " +
        "record and index entry (ids and counts, not texts): on a large collection it takes a while (see docs/reliability.md).",
      tag: "Service",
      scope: "admin",
      query: s.doctorQuery,
      response: s.doctorResponse,
      example: {
        query: { repair: "true", collection_name: "kb" },
        response: {
          repair: true,
          checked: { collections: 1, documents: 1200, index_documents: 1200, blobs: 1201 },
          found: { blob_missing: 0, index_missing: 1, index_mismatch: 0, index_stale: 0, index_orphan: 0, job_lost: 0, blob_orphan: 1 },
          repaired: { blob_missing: 0, index_missing: 1, index_mismatch: 0, index_stale: 0, index_orphan: 0, job_lost: 0, blob_orphan: 1 },
          unrepaired: 0,
          unrepairable: { raw_copy_missing: 0 },
          examples: [
            {
              kind: "index_missing",
              collection_name: "kb",
              doc_id: "a1b2c3",
              detail: "ready with 4 chunks in version 2, and the index holds none",
              action: "queued for indexing again",
            },
            {
              kind: "blob_orphan",
              collection_name: "kb",
              doc_id: null,
              detail: "blob kb/0196b9d8/0196b9d8-5c1e-7cc4-9a61-4f0f7d1e2a10, made 2025-05-10T10:58:06.494Z, is named by no document",
              action: "deleted",
            },
          ],
          examples_omitted: 0,
          seconds: 0.8,
        },
      },
      async handle({ query, req, res }) {
        const principal = principalOf(req);
        // A token restricted to some collections checks those (its "all"); the index-wide look
        // for documents of collections the catalog no longer knows needs an unrestricted one.
        const collections =
          query.collection_name !== undefined
            ? [query.collection_name]
            : principal.collections === null
              ? null
              : visibleTo(
                  principal,
                  (await catalog.listCollections()).map((c) => c.name),
                  (c) => c,
                );
        const repair = query.repair ?? false;
        const report = await runDoctor(
          { catalog, index, blobs, queue, logger: req.log },
          { repair, collections, lostAfterMs: ctx.config.recovery.lostAfterMs },
        );
        if (repair)
          audit(req, "doctor.repaired", {
            collection: query.collection_name ?? null,
            repaired: report.repaired,
            unrepaired: report.unrepaired,
          });
        res.json(doctorResponse(report));
      },
    }),
  ];
}

function doctorResponse(r: DoctorReport) {
  return {
    repair: r.repair,
    checked: {
      collections: r.checked.collections,
      documents: r.checked.documents,
      index_documents: r.checked.indexDocuments,
      blobs: r.checked.blobs,
    },
    found: r.found,
    repaired: r.repaired,
    unrepaired: r.unrepaired,
    unrepairable: r.unrepairable,
    examples: r.examples.map((e) => ({ kind: e.kind, collection_name: e.collection, doc_id: e.docId, detail: e.detail, action: e.action })),
    examples_omitted: r.examplesOmitted,
    seconds: r.seconds,
  };
}
