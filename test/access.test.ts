/**
 * Who may do what, seen from a client, in both modes: scopes, tokens restricted to some
 * collections on every operation (their "all" is their own), the audit lines a deletion or a
 * refusal writes, and no token ever in the service's log.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { removeDir, startService, until, uniqueName, type Mode, type Reply, type Service } from "./harness.ts";

const ADMIN = "admin-access-0123456789abcdef";
const TEAM_A = "team-a-access-0123456789abcdef";
const TEAM_B = "team-b-access-0123456789abcdef";
const READER_A = "reader-a-access-0123456789abcdef";
/** Close to a real token: one character off. */
const WRONG = "team-a-access-0123456789abcdeF";

interface LogLine {
  audit?: string;
  req_id?: string;
  principal?: string | null;
  [key: string]: unknown;
}

function logLines(svc: Service): LogLine[] {
  return svc.output.split("\n").flatMap((line) => {
    try {
      return [JSON.parse(line) as LogLine];
    } catch {
      return [];
    }
  });
}

/** The audit line of the request that got `reply`, once the service has written it. */
const auditOf = (svc: Service, reply: Reply, event: string) =>
  until(async () => logLines(svc).find((l) => l.audit === event && l.req_id === reply.headers.get("x-request-id")));

describe.each<Mode>(["embedded", "distributed"])("access (%s mode)", (mode) => {
  let svc: Service;
  // Each team's collections start with its prefix; a run's names are its own.
  const run = uniqueName("r").slice(2);
  const a1 = `team-a-${run}-1`;
  const a2 = `team-a-${run}-2`;
  const b1 = `team-b-${run}`;

  beforeAll(async () => {
    svc = await startService({
      mode,
      workers: mode === "distributed" ? 1 : 0,
      env: {
        // As much logging as there is, to show that none of it holds a token.
        LOG_LEVEL: "debug",
        API_TOKENS: [ADMIN, `${TEAM_A}:read+write+admin:team-a-*`, `${TEAM_B}:read+write:${b1}`, `${READER_A}:read:team-a-*`].join(","),
      },
    });
    const load = (token: string, collection: string, docId: string, text: string) =>
      svc.request("POST", "/load_text_to_collection", {
        token,
        query: { collection_name: collection, doc_id: docId, wait: "true" },
        json: { text, metadata: { status: "open" } },
      });
    for (const [token, collection, id] of [
      [TEAM_A, a1, "a1-doc"],
      [TEAM_A, a2, "a2-doc"],
      [TEAM_B, b1, "b1-doc"],
    ] as const) {
      const res = await load(token, collection, id, `quartz crystals in ${collection}`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.status).toBe("ready");
    }
  });

  afterAll(async () => {
    await svc?.stop();
    if (svc) removeDir(svc.dataDir);
  });

  it("enforces scopes: read searches and lists, write loads and deletes documents, admin deletes collections", async () => {
    const search = await svc.request("GET", "/get_relevant_documents", {
      token: READER_A,
      query: { query: "quartz", collection_names: a1 },
    });
    expect(search.status).toBe(200);
    const load = await svc.request("POST", "/load_text_to_collection", {
      token: READER_A,
      query: { collection_name: a1 },
      json: { text: "x" },
    });
    expect(load.status).toBe(403);
    expect(load.body.detail).toBe("this token lacks the 'write' scope");
    const del = await svc.request("DELETE", "/delete_document_from_collection", {
      token: READER_A,
      query: { collection_name: a1, id_value: "a1-doc" },
    });
    expect(del.status).toBe(403);
    const drop = await svc.request("DELETE", "/delete_collection", { token: TEAM_B, query: { collection_name: b1 } });
    expect(drop.status).toBe(403);
    expect(drop.body.detail).toBe("this token lacks the 'admin' scope");
  });

  it("searches only a restricted token's own collections when it names none", async () => {
    const ids = (r: Reply) => r.body.results.map((h: { collection_name: string }) => h.collection_name).sort();
    const own = await svc.request("GET", "/get_relevant_documents", { token: TEAM_A, query: { query: "quartz", k: 10 } });
    expect(own.status).toBe(200);
    expect(ids(own)).toEqual([a1, a2]);
    const post = await svc.request("POST", "/get_relevant_documents", { token: TEAM_B, query: { query: "quartz", k: 10 }, json: {} });
    expect(ids(post)).toEqual([b1]);
    // An unrestricted token's "all" is every collection (others' tests' too).
    const all = await svc.request("GET", "/get_relevant_documents", { token: ADMIN, query: { query: "quartz", k: 100 } });
    expect(ids(all)).toEqual(expect.arrayContaining([a1, a2, b1]));
  });

  it("refuses a restricted token every operation on another team's collection, and says so before whether it exists", async () => {
    const refusals: [string, string, Parameters<Service["request"]>[2]][] = [
      ["GET", "/get_relevant_documents", { query: { query: "quartz", collection_names: b1 } }],
      ["GET", "/get_relevant_documents", { query: { query: "quartz", collection_names: `${a1},${b1}` } }],
      ["POST", "/get_relevant_documents", { query: { query: "quartz" }, json: { collection_names: [a1, b1] } }],
      ["GET", "/get_content_by_tag", { query: { collection_name: b1, tag_info: "status=open" } }],
      ["POST", "/get_content_by_tag", { query: { collection_name: b1 }, json: { tag_info: "status=open" } }],
      ["GET", "/get_list_of_documents_names", { query: { collection_name: b1 } }],
      ["GET", "/get_document_status", { query: { collection_name: b1, id_value: "b1-doc" } }],
      ["POST", "/load_text_to_collection", { query: { collection_name: b1 }, json: { text: "intrusion" } }],
      ["POST", "/load_texts_to_collection", { query: { collection_name: b1 }, json: { documents: [{ text: "intrusion" }] } }],
      ["POST", "/load_document_to_collection", { query: { collection_name: b1 }, form: uploadForm() }],
      ["DELETE", "/delete_document_from_collection", { query: { collection_name: b1, id_value: "b1-doc" } }],
      ["DELETE", "/delete_collection", { query: { collection_name: b1 } }],
      ["POST", "/doctor", { query: { collection_name: b1, repair: "true" } }],
      // Not there at all: still 403, so a token cannot probe which collections exist.
      ["GET", "/get_list_of_documents_names", { query: { collection_name: "team-b-nonexistent" } }],
    ];
    for (const [method, path, opts] of refusals) {
      const res = await svc.request(method, path, { ...opts, token: TEAM_A });
      expect(res.status, `${method} ${path} ${JSON.stringify(opts?.query)}`).toBe(403);
      expect(res.headers.get("content-type")).toMatch(/application\/problem\+json/);
      expect(res.body.detail).toMatch(/^this token may not use the collection 'team-b-[a-z0-9-]+'; it may use: team-a-\*$/);
    }
    // Nothing of team B's changed.
    const docs = await svc.request("GET", "/get_list_of_documents_names", { token: TEAM_B, query: { collection_name: b1 } });
    expect(docs.body.documents.map((d: { doc_id: string }) => d.doc_id)).toEqual(["b1-doc"]);
    const tag = await svc.request("GET", "/get_content_by_tag", { token: TEAM_B, query: { collection_name: b1, tag_info: "status=open" } });
    expect(tag.body.documents.map((d: { text: string }) => d.text)).toEqual([`quartz crystals in ${b1}`]);
  });

  it("lists only a restricted token's own collections", async () => {
    const names = async (token: string) =>
      (await svc.request("GET", "/get_list_of_collection", { token })).body.collections
        .map((c: { name: string }) => c.name)
        .filter((n: string) => n.includes(run))
        .sort();
    expect(await names(TEAM_A)).toEqual([a1, a2]);
    expect(await names(READER_A)).toEqual([a1, a2]);
    expect(await names(TEAM_B)).toEqual([b1]);
    expect(await names(ADMIN)).toEqual([a1, a2, b1]);
    const all = (await svc.request("GET", "/get_list_of_collection", { token: TEAM_B })).body.collections;
    expect(all.map((c: { name: string }) => c.name)).toEqual([b1]);
  });

  it("writes an audit line with the request id for each deletion and each refused token", async () => {
    const doc = await svc.request("DELETE", "/delete_document_from_collection", {
      token: TEAM_A,
      query: { collection_name: a2, id_value: "a2-doc" },
    });
    expect(doc.status).toBe(200);
    const docLine = await auditOf(svc, doc, "document.deleted");
    expect(docLine).toMatchObject({ collection: a2, doc_id: "a2-doc", method: "DELETE", path: "/delete_document_from_collection" });
    expect(docLine.principal).toMatch(/^token:[0-9a-f]{12}$/);

    const coll = await svc.request("DELETE", "/delete_collection", { token: TEAM_A, query: { collection_name: a1 } });
    expect(coll.status).toBe(200);
    expect(await auditOf(svc, coll, "collection.deleted")).toMatchObject({ collection: a1, documents: 1, principal: docLine.principal });

    const wrong = await svc.request("GET", "/get_list_of_collection", { token: WRONG });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get("www-authenticate")).toBe('Bearer realm="docstore"');
    expect(await auditOf(svc, wrong, "token.refused")).toMatchObject({ reason: "unknown bearer token", principal: null });

    const none = await svc.request("GET", "/get_list_of_collection", { token: null });
    expect(await auditOf(svc, none, "token.refused")).toMatchObject({ reason: expect.stringMatching(/^missing bearer token/) });

    const denied = await svc.request("DELETE", "/delete_collection", { token: TEAM_A, query: { collection_name: b1 } });
    expect(await auditOf(svc, denied, "access.denied")).toMatchObject({
      principal: docLine.principal,
      reason: expect.stringContaining(b1),
    });
  });

  it("refuses a token of any length with a 401, never a server error", async () => {
    for (const token of ["x", "a".repeat(4000), `${ADMIN}x`, ADMIN.slice(0, -1)]) {
      expect((await svc.request("GET", "/get_list_of_collection", { token })).status).toBe(401);
    }
  });

  it("never writes a token, accepted or refused, to its log", async () => {
    // Every request above used one of these; the service logged at debug level throughout.
    expect(logLines(svc).some((l) => l.audit === "token.refused")).toBe(true);
    for (const token of [ADMIN, TEAM_A, TEAM_B, READER_A, WRONG]) expect(svc.output).not.toContain(token);
  });
});

function uploadForm(): FormData {
  const form = new FormData();
  form.set("file", new Blob(["an uploaded intrusion"], { type: "text/plain" }), "intrusion.txt");
  return form;
}
