/**
 * The development embedding server (server.py) as docstore and the openai package see it.
 * Runs when its environment exists (`bash bench/embed-server/run.sh --install-only` makes it);
 * otherwise skips and says so: installing it is a download of some 120 MB.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OpenAIEmbedder } from "@docstore/shared/embedder/openai";

const HERE = import.meta.dirname;
const installed = existsSync(path.join(HERE, ".venv/bin/python")) && existsSync(path.join(HERE, ".venv/installed.txt"));
if (!installed) console.warn("embed-server tests skipped: run `bash bench/embed-server/run.sh --install-only` to make its environment");

const MODEL = "all-MiniLM-L6-v2";
/** The sentence-transformers documentation's example for this model, with its printed similarities. */
const SENTENCES = ["The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium."];
const PUBLISHED = [
  [0, 1, 0.666],
  [0, 2, 0.1046],
  [1, 2, 0.1411],
] as const;

const dot = (a: ArrayLike<number>, b: ArrayLike<number>) => Array.from(a).reduce((s, x, i) => s + x * (b[i] as number), 0);

describe.skipIf(!installed)("bench/embed-server", () => {
  let proc: ChildProcess;
  let baseURL = "";

  beforeAll(async () => {
    proc = spawn("bash", [path.join(HERE, "run.sh"), "--port", "0"], { stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    baseURL = await new Promise<string>((resolve, reject) => {
      const onData = (c: Buffer) => {
        output += c.toString();
        const m = /embed-server ready at (\S+)/.exec(output);
        if (m) resolve(m[1]!);
      };
      proc.stdout!.on("data", onData);
      proc.stderr!.on("data", onData);
      proc.once("exit", (code) => reject(new Error(`embed-server exited ${code}:\n${output}`)));
    });
  });

  afterAll(() => {
    proc?.kill("SIGTERM");
  });

  const post = (body: unknown) =>
    fetch(`${baseURL}/embeddings`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });

  it("answers the openai package's default request (base64) with the model's unit vectors and its published similarities", async () => {
    const client = new OpenAI({ baseURL, apiKey: "unused", maxRetries: 0 });
    const res = await client.embeddings.create({ model: MODEL, input: SENTENCES });
    expect(res.model).toBe(MODEL);
    expect(res.usage.prompt_tokens).toBeGreaterThan(SENTENCES.length * 3);
    const vectors = res.data.sort((a, b) => a.index - b.index).map((d) => d.embedding);
    for (const v of vectors) {
      expect(v).toHaveLength(384);
      expect(Math.sqrt(dot(v, v))).toBeCloseTo(1, 5);
    }
    for (const [a, b, similarity] of PUBLISHED) expect(dot(vectors[a]!, vectors[b]!)).toBeCloseTo(similarity, 3);
  });

  it("gives the same vectors as floats and as base64", async () => {
    const asFloat = (await (await post({ model: MODEL, input: SENTENCES[0], encoding_format: "float" })).json()) as any;
    const asBase64 = (await (await post({ model: MODEL, input: SENTENCES[0], encoding_format: "base64" })).json()) as any;
    const bytes = Buffer.from(asBase64.data[0].embedding, "base64");
    const decoded = Array.from(new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4));
    expect(decoded).toEqual(asFloat.data[0].embedding.map((x: number) => Math.fround(x)));
  });

  it("gives a text the same vector alone and batched with longer texts (padding is masked)", async () => {
    const long = "Mitochondrial dysfunction ".repeat(40);
    const alone = await Promise.all(
      SENTENCES.map(async (s) => ((await (await post({ model: MODEL, input: s })).json()) as any).data[0].embedding as number[]),
    );
    // Concurrent requests are run together by the model thread.
    const batched = await Promise.all([
      post({ model: MODEL, input: [long, ...SENTENCES] }),
      post({ model: MODEL, input: [long + " again", SENTENCES[2]] }),
    ]);
    const first = (await batched[0]!.json()) as any;
    const second = (await batched[1]!.json()) as any;
    SENTENCES.forEach((_, i) => expect(dot(first.data[i + 1].embedding, alone[i]!)).toBeCloseTo(1, 5));
    expect(dot(second.data[1].embedding, alone[2]!)).toBeCloseTo(1, 5);
    expect(dot(first.data[0].embedding, alone[0]!)).toBeLessThan(0.5);
  });

  it("serves docstore's embedder", async () => {
    const embedder = new OpenAIEmbedder({ baseUrl: baseURL, model: MODEL, dimensions: 384 });
    const [a, b] = await embedder.embed([SENTENCES[0]!, SENTENCES[1]!]);
    expect(dot(a!, b!)).toBeCloseTo(0.666, 3);
    await embedder.close();
  });

  it("refuses what it cannot serve, as OpenAI does", async () => {
    const cases: [unknown, number, string | null][] = [
      ["{not json", 400, null],
      [{ input: "x" }, 400, "model"],
      [{ model: "text-embedding-3-small", input: "x" }, 404, "model"],
      [{ model: MODEL, input: "" }, 400, "input"],
      [{ model: MODEL, input: [] }, 400, "input"],
      [{ model: MODEL, input: [[1, 2, 3]] }, 400, "input"],
      [{ model: MODEL, input: "x", dimensions: 256 }, 400, "dimensions"],
      [{ model: MODEL, input: "x", encoding_format: "int8" }, 400, "encoding_format"],
    ];
    for (const [body, status, param] of cases) {
      const res = await post(body);
      const json = (await res.json()) as any;
      expect([res.status, json.error.param], JSON.stringify(body)).toEqual([status, param]);
      expect(json.error.message).toBeTruthy();
    }
    const fine = await post({ model: MODEL, input: "x", dimensions: 384 });
    expect(fine.status).toBe(200);
  });
});
