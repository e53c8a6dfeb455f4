import { Transport, type Call, type TransportOptions } from "./http.ts";
import { multipart } from "./multipart.ts";
import type { FormOf, JsonBodyOf, Method, OperationKey, Path, QueryOf, SuccessOf } from "./operations.ts";

/** Metadata as the service takes it: the known fields typed, other keys scalars or lists of them. */
export type Metadata = Exclude<JsonBodyOf<"/load_text_to_collection", "post">["metadata"], string | undefined>;
export type LoadResult = SuccessOf<"/load_text_to_collection", "post">;
export type BulkDocument = JsonBodyOf<"/load_texts_to_collection", "post">["documents"][number];
export type SearchResponse = SuccessOf<"/get_relevant_documents", "post">;
export type SearchResult = SearchResponse["results"][number];
export type ContentPage = SuccessOf<"/get_content_by_tag", "post">;
export type TaggedDocument = ContentPage["documents"][number];
export type DocumentPage = SuccessOf<"/get_list_of_documents_names", "get">;
export type ListedDocument = DocumentPage["documents"][number];
export type CollectionSummary = SuccessOf<"/get_list_of_collection", "get">["collections"][number];
export type DocumentStatus = SuccessOf<"/get_document_status", "get">;
export type ChunkPage = SuccessOf<"/get_document_chunks", "get">;
export type Chunk = ChunkPage["chunks"][number];
export type DocumentState = NonNullable<QueryOf<"/get_list_of_documents_names", "get">["status"]>;
export type Readiness = SuccessOf<"/readyz", "get">;
export type DoctorReport = SuccessOf<"/doctor", "post">;

export interface LoadOptions {
  /** The document's id; else metadata.sys_id, else one the service makes. */
  docId?: string;
  metadata?: Metadata;
  /** Answer once the document is searchable or failed (within the service's WAIT_TIMEOUT_MS). */
  wait?: boolean;
}

export interface FileInput {
  data: Uint8Array | Blob;
  /** A hint for the type, and the document's name in lists. */
  filename: string;
  /** The declared media type, another hint; the service detects the type from the bytes. */
  type?: string;
}

export interface SearchOptions {
  k?: number;
  /** Collections to search; every one when omitted. */
  collections?: string[];
  /** A filter in encoded-query syntax, e.g. `status=open^priority<=2`. */
  filter?: string;
}

export interface PageOptions {
  limit?: number;
  cursor?: string;
}

export interface DocumentListOptions {
  /** Only documents with this status (`pending`: queued or processing). */
  status?: DocumentState;
  /** Only documents whose metadata match this filter. */
  filter?: string;
}

/** Page size used by the iterators: the service's largest. */
const PAGE = 1000;

/** The upload form's field names, checked against the document: a renamed field stops compiling. */
const UPLOAD_FIELDS: { [K in keyof FormOf<"/load_document_to_collection", "post">]-?: K } = { file: "file", metadata: "metadata" };

const flag = (wait: boolean | undefined) => (wait === undefined ? undefined : wait ? ("true" as const) : ("false" as const));

/** Follows `next_cursor` until the last page, yielding each item. */
async function* paginate<T>(page: (cursor: string | undefined) => Promise<{ items: T[]; next: string | null }>): AsyncGenerator<T> {
  let cursor: string | undefined;
  do {
    const { items, next } = await page(cursor);
    yield* items;
    cursor = next ?? undefined;
  } while (cursor !== undefined);
}

/**
 * docstore's operations as typed functions. Errors are raised as ProblemError (the service's
 * problem details) or ConnectionError; 429 and 503 are retried as the answer's Retry-After
 * says, within the retry policy.
 */
export class DocstoreClient {
  readonly http: Transport;

  constructor(opts: TransportOptions) {
    this.http = new Transport(opts);
  }

  /** One operation, its query, body and answer typed from the service's document. */
  #call<P extends Path, M extends Method>(
    method: M,
    path: P,
    input: { query?: QueryOf<P, M>; json?: JsonBodyOf<P, M>; form?: Call["form"]; accept?: Call["accept"] } = {},
  ): Promise<SuccessOf<P, M>> {
    return this.http.request(method.toUpperCase(), path, input as Call);
  }

  /** Uploads a file (multipart `file` and `metadata`). */
  async loadDocument(collection: string, file: FileInput, opts: LoadOptions = {}): Promise<LoadResult> {
    const data = file.data instanceof Blob ? new Uint8Array(await file.data.arrayBuffer()) : file.data;
    const type = file.type ?? (file.data instanceof Blob && file.data.type ? file.data.type : "application/octet-stream");
    const fields = opts.metadata === undefined ? [] : [{ name: UPLOAD_FIELDS.metadata, value: JSON.stringify(opts.metadata) }];
    return this.#call("post", "/load_document_to_collection", {
      query: { collection_name: collection, doc_id: opts.docId, wait: flag(opts.wait) },
      form: multipart(fields, { name: UPLOAD_FIELDS.file, filename: file.filename, type, data }),
    });
  }

  loadText(collection: string, text: string, opts: LoadOptions = {}): Promise<LoadResult> {
    return this.#call("post", "/load_text_to_collection", {
      query: { collection_name: collection, doc_id: opts.docId, wait: flag(opts.wait) },
      json: { text, metadata: opts.metadata },
    });
  }

  /** Up to 1000 texts in one request; one invalid document refuses them all (400 naming it). */
  async loadTexts(collection: string, documents: BulkDocument[], opts: { wait?: boolean } = {}): Promise<LoadResult[]> {
    const r = await this.#call("post", "/load_texts_to_collection", {
      query: { collection_name: collection, wait: flag(opts.wait) },
      json: { documents },
    });
    return r.documents;
  }

  search(query: string, opts: SearchOptions = {}): Promise<SearchResponse> {
    return this.#call("post", "/get_relevant_documents", {
      query: { query, k: opts.k },
      json: { collection_names: opts.collections, metadata: opts.filter },
    });
  }

  /** A page of the documents matching a filter, texts included. */
  contentByTag(collection: string, opts: PageOptions & { filter?: string } = {}): Promise<ContentPage> {
    return this.#call("post", "/get_content_by_tag", {
      query: { collection_name: collection, limit: opts.limit, cursor: opts.cursor },
      json: { tag_info: opts.filter },
    });
  }

  /** Every document matching a filter, a page at a time (`limit` and `cursor`). */
  contents(collection: string, opts: { filter?: string; pageSize?: number } = {}): AsyncGenerator<TaggedDocument> {
    return paginate(async (cursor) => {
      const page = await this.contentByTag(collection, { filter: opts.filter, limit: opts.pageSize ?? PAGE, cursor });
      return { items: page.documents, next: page.next_cursor };
    });
  }

  /** A page of a collection's documents with their status, in doc_id order. */
  listDocuments(collection: string, opts: PageOptions & DocumentListOptions = {}): Promise<DocumentPage> {
    return this.#call("get", "/get_list_of_documents_names", {
      query: { collection_name: collection, status: opts.status, tag_info: opts.filter, limit: opts.limit, cursor: opts.cursor },
    });
  }

  /** Every document of a collection (or those with a status, or matching a filter), a page at a time. */
  documents(collection: string, opts: DocumentListOptions & { pageSize?: number } = {}): AsyncGenerator<ListedDocument> {
    return paginate(async (cursor) => {
      const page = await this.listDocuments(collection, { status: opts.status, filter: opts.filter, limit: opts.pageSize ?? PAGE, cursor });
      return { items: page.documents, next: page.next_cursor };
    });
  }

  /** A page of a document's chunks as indexed, with their offsets and citations. */
  documentChunks(collection: string, docId: string, opts: PageOptions = {}): Promise<ChunkPage> {
    return this.#call("get", "/get_document_chunks", {
      query: { collection_name: collection, id_value: docId, limit: opts.limit, cursor: opts.cursor },
    });
  }

  /** Every chunk of a document, a page at a time. */
  chunks(collection: string, docId: string, opts: { pageSize?: number } = {}): AsyncGenerator<Chunk> {
    return paginate(async (cursor) => {
      const page = await this.documentChunks(collection, docId, { limit: opts.pageSize ?? PAGE, cursor });
      return { items: page.chunks, next: page.next_cursor };
    });
  }

  async listCollections(): Promise<CollectionSummary[]> {
    return (await this.#call("get", "/get_list_of_collection")).collections;
  }

  documentStatus(collection: string, docId: string): Promise<DocumentStatus> {
    return this.#call("get", "/get_document_status", { query: { collection_name: collection, id_value: docId } });
  }

  deleteDocument(collection: string, docId: string): Promise<SuccessOf<"/delete_document_from_collection", "delete">> {
    return this.#call("delete", "/delete_document_from_collection", { query: { collection_name: collection, id_value: docId } });
  }

  deleteCollection(collection: string): Promise<SuccessOf<"/delete_collection", "delete">> {
    return this.#call("delete", "/delete_collection", { query: { collection_name: collection } });
  }

  /**
   * Checks that catalog, raw copies and index agree (an admin token); with `repair`, repairs
   * what does not. Without `collection`, every collection the token may use.
   */
  doctor(opts: { repair?: boolean; collection?: string } = {}): Promise<DoctorReport> {
    return this.#call("post", "/doctor", { query: { repair: flag(opts.repair), collection_name: opts.collection } });
  }

  /** Closes the connections kept open for later requests (they never keep a process running). */
  close(): void {
    this.http.close();
  }

  health(): Promise<SuccessOf<"/healthz", "get">> {
    return this.#call("get", "/healthz");
  }

  /** The readiness probe's answer, also when it is a 503 (a dependency down: `checks` says which). */
  ready(): Promise<Readiness> {
    return this.#call("get", "/readyz", { accept: [503] });
  }
}

/**
 * Which method serves each operation of the document. Typed against the generated paths: an
 * operation the service gains fails the type check until the client covers it.
 */
export const OPERATIONS = {
  "post /load_document_to_collection": "loadDocument",
  "post /load_text_to_collection": "loadText",
  "post /load_texts_to_collection": "loadTexts",
  "get /get_relevant_documents": "search",
  "post /get_relevant_documents": "search",
  "get /get_content_by_tag": "contentByTag",
  "post /get_content_by_tag": "contentByTag",
  "get /get_list_of_documents_names": "listDocuments",
  "get /get_list_of_collection": "listCollections",
  "get /get_document_status": "documentStatus",
  "get /get_document_chunks": "documentChunks",
  "delete /delete_document_from_collection": "deleteDocument",
  "delete /delete_collection": "deleteCollection",
  "post /doctor": "doctor",
  "get /healthz": "health",
  "get /readyz": "ready",
} as const satisfies Record<OperationKey, keyof DocstoreClient>;
