"""
A development tool: all-MiniLM-L6-v2 served through OpenAI's embeddings protocol on loopback,
so that docstore's hybrid search can be measured with a real model (`pnpm bench:quality`).
Nothing in docstore depends on it. Start it with run.sh beside this file.

POST /v1/embeddings (or /embeddings): {"input": string or array of strings, "model",
"encoding_format": "float" (default) or "base64" (little-endian float32, what the openai npm
package asks for when it is not told otherwise), "dimensions": absent or 384}. Answers as OpenAI
does: {"object": "list", "data": [{"object": "embedding", "index", "embedding"}], "model",
"usage"}, errors as {"error": {"message", "type", "param", "code"}}. Vectors have unit length.
GET /v1/models lists the model; GET /health answers 200.

Batching: every request's texts go to a queue; a model thread (--threads of them) takes
whatever is waiting (from all requests at once, up to --batch texts), sorts it by length so
that little padding is computed, and runs it. Texts already embedded come from an in-memory cache (--cache entries).
"""
from __future__ import annotations

import argparse
import base64
import hashlib
import json
import queue
import sys
import threading
from collections import OrderedDict
from concurrent.futures import Future
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np

import model as minilm

MAX_INPUTS = 2048  # OpenAI's limit on inputs per request
MAX_BODY = 64 * 1024 * 1024
LOOPBACK = ("127.0.0.1", "localhost")


class ApiError(Exception):
    def __init__(self, status: int, message: str, param: str | None = None, code: str | None = None, kind: str = "invalid_request_error"):
        super().__init__(message)
        self.status, self.message, self.param, self.code, self.kind = status, message, param, code, kind


class Batcher:
    """Model threads run batches; requests wait on futures for their texts' vectors."""

    def __init__(self, model: minilm.MiniLM, batch: int, cache_entries: int, threads: int):
        self.model = model
        self.batch = batch
        self.cache: OrderedDict[bytes, np.ndarray] = OrderedDict()
        self.cache_entries = cache_entries
        self.lock = threading.Lock()
        self.waiting: queue.Queue[tuple[list[int], Future]] = queue.Queue()
        # NumPy releases the GIL in its matrix products and element-wise loops, so model
        # threads running different batches use as many cores.
        for n in range(threads):
            threading.Thread(target=self._run, name=f"model-{n}", daemon=True).start()

    def embed(self, texts: list[str]) -> tuple[np.ndarray, int]:
        """Unit vectors for texts, in order, and the number of tokens they were counted as."""
        ids = self.model.tokenize(texts)
        out = np.zeros((len(texts), self.model.dimensions), dtype=np.float32)
        pending: list[tuple[int, bytes, Future]] = []
        for i, seq in enumerate(ids):
            key = hashlib.sha256(np.asarray(seq, dtype=np.int32).tobytes()).digest()
            with self.lock:
                hit = self.cache.get(key)
                if hit is not None:
                    self.cache.move_to_end(key)
            if hit is not None:
                out[i] = hit
                continue
            future: Future = Future()
            self.waiting.put((seq, future))
            pending.append((i, key, future))
        for i, key, future in pending:
            out[i] = future.result()
            with self.lock:
                self.cache[key] = out[i].copy()
                while len(self.cache) > self.cache_entries:
                    self.cache.popitem(last=False)
        return out, sum(len(seq) for seq in ids)

    def _run(self) -> None:
        while True:
            items = [self.waiting.get()]
            while len(items) < self.batch:
                try:
                    items.append(self.waiting.get_nowait())
                except queue.Empty:
                    break
            items.sort(key=lambda item: len(item[0]))
            # Sub-batches of similar lengths, bounded by tokens so that memory stays small.
            start = 0
            while start < len(items):
                end = start + 1
                while end < len(items) and (end - start + 1) * len(items[end][0]) <= 16_384:
                    end += 1
                group = items[start:end]
                try:
                    vectors = self.model.encode_ids([seq for seq, _ in group])
                    for (_, future), vector in zip(group, vectors):
                        future.set_result(vector)
                except Exception as err:  # noqa: BLE001 - handed to the waiting request
                    for _, future in group:
                        future.set_exception(err)
                start = end


def parse_request(body: bytes, served: set[str], dimensions: int) -> tuple[list[str], str, str]:
    try:
        request = json.loads(body)
    except (ValueError, UnicodeDecodeError) as err:
        raise ApiError(400, f"We could not parse the JSON body of your request: {err}") from None
    if not isinstance(request, dict):
        raise ApiError(400, "The request body must be a JSON object.")
    model = request.get("model")
    if not isinstance(model, str) or not model:
        raise ApiError(400, "you must provide a model parameter", "model")
    if model not in served:
        raise ApiError(404, f"The model `{model}` does not exist; this server has {sorted(served)}.", "model", "model_not_found")
    raw = request.get("input")
    texts = [raw] if isinstance(raw, str) else raw
    if not isinstance(texts, list) or len(texts) == 0:
        raise ApiError(400, "'input' must be a non-empty string or a non-empty array of strings.", "input")
    if len(texts) > MAX_INPUTS:
        raise ApiError(400, f"'input' has {len(texts)} items; at most {MAX_INPUTS} per request.", "input")
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise ApiError(400, f"'input[{i}]' is not a string (token arrays are not supported here).", "input")
        if text == "":
            raise ApiError(400, f"'input[{i}]' is empty; an input must not be an empty string.", "input")
    encoding = request.get("encoding_format", "float")
    if encoding is None:
        encoding = "float"
    if encoding not in ("float", "base64"):
        raise ApiError(400, f"'encoding_format' must be 'float' or 'base64', not {json.dumps(encoding)}.", "encoding_format")
    wanted = request.get("dimensions")
    if wanted is not None and wanted != dimensions:
        raise ApiError(400, f"This model gives {dimensions} dimensions and cannot shorten them; 'dimensions' was {json.dumps(wanted)}.", "dimensions")
    return texts, model, encoding


def make_handler(batcher: Batcher, served: set[str]):
    dims = batcher.model.dimensions

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "embed-server"

        def log_message(self, format: str, *args) -> None:  # noqa: A002 - the base class's name
            pass

        def _send(self, status: int, payload: dict) -> None:
            data = json.dumps(payload, separators=(",", ":")).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _error(self, err: ApiError) -> None:
            self._send(err.status, {"error": {"message": err.message, "type": err.kind, "param": err.param, "code": err.code}})

        def do_GET(self) -> None:  # noqa: N802 - the base class's name
            path = self.path.split("?")[0]
            if path == "/health":
                self._send(200, {"status": "ok"})
            elif path in ("/v1/models", "/models"):
                self._send(200, {"object": "list", "data": [{"id": m, "object": "model", "owned_by": "sentence-transformers"} for m in sorted(served)]})
            else:
                self._error(ApiError(404, f"Unknown path {path}.", code="not_found"))

        def do_POST(self) -> None:  # noqa: N802 - the base class's name
            path = self.path.split("?")[0]
            length = int(self.headers.get("content-length") or 0)
            if length > MAX_BODY:
                self.close_connection = True
                return self._error(ApiError(413, f"The body has {length} bytes; at most {MAX_BODY}."))
            body = self.rfile.read(length)
            if path not in ("/v1/embeddings", "/embeddings"):
                return self._error(ApiError(404, f"Unknown path {path}.", code="not_found"))
            try:
                texts, model, encoding = parse_request(body, served, dims)
                vectors, tokens = batcher.embed(texts)
            except ApiError as err:
                return self._error(err)
            except Exception as err:  # noqa: BLE001 - reported to the client as OpenAI would
                return self._error(ApiError(500, f"embedding failed: {err}", kind="server_error"))
            if encoding == "base64":
                items = [base64.b64encode(v.astype("<f4").tobytes()).decode() for v in vectors]
            else:
                items = [v.tolist() for v in vectors]
            self._send(200, {
                "object": "list",
                "data": [{"object": "embedding", "index": i, "embedding": e} for i, e in enumerate(items)],
                "model": model,
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            })

    return Handler


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1", help="a loopback address (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8090, help="0 picks a free port (default 8090)")
    parser.add_argument("--batch", type=int, default=64, help="texts per model run at most (default 64)")
    parser.add_argument("--max-tokens", type=int, default=None, help="word pieces kept per text (default the model's 256)")
    parser.add_argument("--cache", type=int, default=100_000, help="vectors kept in memory (default 100,000)")
    parser.add_argument("--threads", type=int, default=2, help="model threads, each running one batch at a time (default 2)")
    args = parser.parse_args()
    if args.host not in LOOPBACK:
        parser.error(f"--host must be a loopback address ({', '.join(LOOPBACK)}): this is a development tool")
    model = minilm.load(args.max_tokens)
    served = {minilm.MODEL_ID, f"sentence-transformers/{minilm.MODEL_ID}"}
    server = ThreadingHTTPServer((args.host, args.port), make_handler(Batcher(model, args.batch, args.cache, max(1, args.threads)), served))
    server.daemon_threads = True
    host, port = server.server_address[:2]
    print(f"embed-server ready at http://{host}:{port}/v1 model {minilm.MODEL_ID} dimensions {model.dimensions} max tokens {model.max_tokens}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        sys.stdout.flush()


if __name__ == "__main__":
    main()
