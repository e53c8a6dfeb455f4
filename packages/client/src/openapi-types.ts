/**
 * The service's operations as TypeScript types, generated from its /openapi.json by
 * `pnpm --filter @docstore/client generate`; do not edit. test/client.test.ts fails when the
 * running service's document no longer gives this file.
 */
export interface paths {
    "/load_document_to_collection": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post: {
            parameters: {
                query: {
                    collection_name: string;
                    doc_id?: string;
                    wait?: "0" | "1" | "true" | "false" | "";
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "multipart/form-data": {
                        /** Format: binary */
                        file: string;
                        metadata?: string;
                    };
                };
            };
            responses: {
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            collection_name: string;
                            doc_id: string;
                            job_id: string;
                            version: number;
                            /** @enum {string} */
                            status: "queued" | "processing" | "ready" | "failed";
                            chunks?: number;
                            error?: string | null;
                        };
                    };
                };
                202: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            collection_name: string;
                            doc_id: string;
                            job_id: string;
                            version: number;
                            /** @enum {string} */
                            status: "queued" | "processing" | "ready" | "failed";
                            chunks?: number;
                            error?: string | null;
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/load_text_to_collection": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post: {
            parameters: {
                query: {
                    collection_name: string;
                    doc_id?: string;
                    wait?: "0" | "1" | "true" | "false" | "";
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        text: string;
                        metadata?: ({
                            sys_id?: string;
                            status?: string;
                            type?: string;
                            priority?: number;
                            flag?: boolean;
                            created?: string;
                        } & {
                            [key: string]: string | number | boolean | (string | number | boolean)[];
                        }) | string;
                    };
                };
            };
            responses: {
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            collection_name: string;
                            doc_id: string;
                            job_id: string;
                            version: number;
                            /** @enum {string} */
                            status: "queued" | "processing" | "ready" | "failed";
                            chunks?: number;
                            error?: string | null;
                        };
                    };
                };
                202: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            collection_name: string;
                            doc_id: string;
                            job_id: string;
                            version: number;
                            /** @enum {string} */
                            status: "queued" | "processing" | "ready" | "failed";
                            chunks?: number;
                            error?: string | null;
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/load_texts_to_collection": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post: {
            parameters: {
                query: {
                    collection_name: string;
                    wait?: "0" | "1" | "true" | "false" | "";
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        documents: {
                            text: string;
                            metadata?: ({
                                sys_id?: string;
                                status?: string;
                                type?: string;
                                priority?: number;
                                flag?: boolean;
                                created?: string;
                            } & {
                                [key: string]: string | number | boolean | (string | number | boolean)[];
                            }) | string;
                            doc_id?: string;
                        }[];
                    };
                };
            };
            responses: {
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            documents: {
                                collection_name: string;
                                doc_id: string;
                                job_id: string;
                                version: number;
                                /** @enum {string} */
                                status: "queued" | "processing" | "ready" | "failed";
                                chunks?: number;
                                error?: string | null;
                            }[];
                        };
                    };
                };
                202: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            documents: {
                                collection_name: string;
                                doc_id: string;
                                job_id: string;
                                version: number;
                                /** @enum {string} */
                                status: "queued" | "processing" | "ready" | "failed";
                                chunks?: number;
                                error?: string | null;
                            }[];
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/get_relevant_documents": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get: {
            parameters: {
                query: {
                    query: string;
                    k?: number;
                    collection_names?: string | string[];
                    metadata?: string;
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            warnings?: string[];
                            results: {
                                doc_id: string;
                                collection_name: string;
                                chunk_index: number;
                                text: string;
                                score: number;
                                metadata: {
                                    [key: string]: unknown;
                                };
                                start: number;
                                end: number;
                                page?: number;
                                sheet?: string;
                                slide?: number;
                                heading_path?: string[];
                            }[];
                        };
                    };
                };
            };
        };
        put?: never;
        post: {
            parameters: {
                query: {
                    query: string;
                    k?: number;
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: {
                content: {
                    "application/json": {
                        collection_names?: string | string[];
                        metadata?: string;
                    };
                };
            };
            responses: {
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            warnings?: string[];
                            results: {
                                doc_id: string;
                                collection_name: string;
                                chunk_index: number;
                                text: string;
                                score: number;
                                metadata: {
                                    [key: string]: unknown;
                                };
                                start: number;
                                end: number;
                                page?: number;
                                sheet?: string;
                                slide?: number;
                                heading_path?: string[];
                            }[];
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/get_content_by_tag": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get: {
            parameters: {
                query: {
                    collection_name: string;
                    tag_info?: string;
                    limit?: number;
                    cursor?: string;
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            warnings?: string[];
                            documents: {
                                doc_id: string;
                                collection_name: string;
                                metadata: {
                                    [key: string]: unknown;
                                };
                                text: string;
                            }[];
                            next_cursor: string | null;
                        };
                    };
                };
            };
        };
        put?: never;
        post: {
            parameters: {
                query: {
                    collection_name: string;
                    limit?: number;
                    cursor?: string;
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: {
                content: {
                    "application/json": {
                        tag_info?: string;
                    };
                };
            };
            responses: {
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            warnings?: string[];
                            documents: {
                                doc_id: string;
                                collection_name: string;
                                metadata: {
                                    [key: string]: unknown;
                                };
                                text: string;
                            }[];
                            next_cursor: string | null;
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/get_list_of_collection": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            collections: {
                                name: string;
                                documents: number;
                                ready: number;
                                pending: number;
                                failed: number;
                            }[];
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/get_document_status": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get: {
            parameters: {
                query: {
                    collection_name: string;
                    id_value: string;
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            collection_name: string;
                            doc_id: string;
                            job_id: string;
                            version: number;
                            /** @enum {string} */
                            status: "queued" | "processing" | "ready" | "failed";
                            chunks: number;
                            error: string | null;
                            metadata: {
                                [key: string]: unknown;
                            };
                            filename: string | null;
                            content_type: string;
                            size: number;
                            sha256: string;
                            created_at: string;
                            updated_at: string;
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/delete_document_from_collection": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        delete: {
            parameters: {
                query: {
                    collection_name: string;
                    id_value: string;
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @constant */
                            deleted: true;
                            collection_name: string;
                            doc_id: string;
                        };
                    };
                };
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/delete_collection": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        delete: {
            parameters: {
                query: {
                    collection_name: string;
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @constant */
                            deleted: true;
                            collection_name: string;
                            documents: number;
                        };
                    };
                };
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/get_list_of_documents_names": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get: {
            parameters: {
                query: {
                    collection_name: string;
                    status?: "queued" | "processing" | "ready" | "failed" | "pending";
                    tag_info?: string;
                    limit?: number;
                    cursor?: string;
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            collection_name: string;
                            documents: {
                                doc_id: string;
                                name: string;
                                status: string;
                                version: number;
                                chunks: number;
                                size: number;
                                content_type: string;
                                error: string | null;
                                updated_at: string;
                            }[];
                            next_cursor: string | null;
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/get_document_chunks": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get: {
            parameters: {
                query: {
                    collection_name: string;
                    id_value: string;
                    limit?: number;
                    cursor?: string;
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            collection_name: string;
                            doc_id: string;
                            /** @enum {string} */
                            status: "queued" | "processing" | "ready" | "failed";
                            version: number | null;
                            chunks: {
                                chunk_index: number;
                                text: string;
                                start: number;
                                end: number;
                                page?: number;
                                sheet?: string;
                                slide?: number;
                                heading_path?: string[];
                            }[];
                            next_cursor: string | null;
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/doctor": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post: {
            parameters: {
                query?: {
                    repair?: "0" | "1" | "true" | "false" | "";
                    collection_name?: string;
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            repair: boolean;
                            checked: {
                                collections: number;
                                documents: number;
                                index_documents: number;
                                blobs: number;
                            };
                            found: {
                                blob_missing: number;
                                index_missing: number;
                                index_mismatch: number;
                                index_stale: number;
                                index_orphan: number;
                                job_lost: number;
                                blob_orphan: number;
                            };
                            repaired: {
                                blob_missing: number;
                                index_missing: number;
                                index_mismatch: number;
                                index_stale: number;
                                index_orphan: number;
                                job_lost: number;
                                blob_orphan: number;
                            };
                            unrepaired: number;
                            unrepairable: {
                                raw_copy_missing: number;
                            };
                            examples: {
                                /** @enum {string} */
                                kind: "blob_missing" | "index_missing" | "index_mismatch" | "index_stale" | "index_orphan" | "job_lost" | "blob_orphan" | "raw_copy_missing";
                                collection_name: string;
                                doc_id: string | null;
                                detail: string;
                                action: string;
                            }[];
                            examples_omitted: number;
                            seconds: number;
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/healthz": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @constant */
                            status: "ok";
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/readyz": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @enum {string} */
                            status: "ready" | "unavailable";
                            checks: {
                                [key: string]: string;
                            };
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: never;
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export type operations = Record<string, never>;
