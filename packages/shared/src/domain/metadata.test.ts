import { describe, expect, it } from "vitest";
import { BadRequestError } from "../errors.ts";
import { KNOWN_FIELD_TYPES, METADATA_LIMITS, metadataSchema, parseMetadata, parseMetadataJson } from "./metadata.ts";

function rejection(run: () => unknown): string {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(BadRequestError);
    expect((err as BadRequestError).kind).toBe("invalid");
    return (err as Error).message;
  }
  throw new Error("expected a BadRequestError");
}

describe("parseMetadata", () => {
  it("accepts typed known fields and other lowercase keys with scalars or arrays of scalars", () => {
    const input = {
      sys_id: "46d44a5d",
      status: "open",
      type: "memo",
      priority: -3,
      flag: false,
      created: "2024-02-29T23:59:59Z",
      _note: "é😀",
      score: 1.5,
      tags: ["a", 2, true],
      none: [],
      empty: "",
    };
    expect(parseMetadata(input)).toEqual(input);
    expect(parseMetadata({})).toEqual({});
  });

  it("holds every known field to the type it has for the filter parser (KNOWN_FIELD_TYPES)", () => {
    const wrong = { string: 1, integer: "1", boolean: "true", instant: "2024-05-01" } as const;
    for (const [field, type] of Object.entries(KNOWN_FIELD_TYPES)) {
      expect(
        rejection(() => parseMetadata({ [field]: wrong[type] })),
        field,
      ).toMatch(new RegExp(`^metadata\\.${field}: expected`));
    }
  });

  it.each([
    [{ priority: 1.5 }, "metadata.priority: expected an integer"],
    [{ priority: "2" }, "metadata.priority: expected an integer"],
    [{ priority: 2 ** 53 }, "metadata.priority: expected an integer"],
    [{ flag: "true" }, "metadata.flag: expected a boolean (true or false)"],
    [{ status: 5 }, "metadata.status: expected a string"],
    [{ sys_id: null }, "metadata.sys_id: expected a string"],
    [{ type: ["a"] }, "metadata.type: expected a string"],
    [{ created: "2024-05-01" }, "metadata.created: expected a real UTC timestamp in the form YYYY-MM-DDThh:mm:ssZ"],
    [{ created: "2024-02-30T00:00:00Z" }, "metadata.created: expected a real UTC timestamp"],
    [{ created: "2024-05-01T10:00:00+02:00" }, "metadata.created: expected a real UTC timestamp"],
    [{ created: "2024-05-01T10:00:00.000Z" }, "metadata.created: expected a real UTC timestamp"],
    [{ created: 1714557600 }, "metadata.created: expected a UTC timestamp"],
    [{ note: null }, "metadata.note: expected a string, a finite number or a boolean, or an array of them"],
    [{ note: { a: 1 } }, "metadata.note: expected a string, a finite number or a boolean, or an array of them"],
    [{ note: Number.NaN }, "metadata.note: expected a string"],
    [{ note: Number.POSITIVE_INFINITY }, "metadata.note: expected a string"],
    [{ tags: ["a", null] }, "metadata.tags[1]: expected a string, a finite number or a boolean"],
    [{ tags: [["a"]] }, "metadata.tags[0]: expected a string, a finite number or a boolean"],
    [{ tags: Array(METADATA_LIMITS.arrayItems + 1).fill(1) }, "metadata.tags: more than 256 items"],
    [{ note: "x".repeat(METADATA_LIMITS.stringLength + 1) }, "metadata.note: longer than 8192 characters"],
    [{ tags: ["x".repeat(8193)] }, "metadata.tags[0]: longer than 8192 characters"],
    [{ note: "a\ud800" }, "metadata.note: contains an unpaired surrogate"],
    [{ Status: "open" }, 'metadata: invalid key "Status": keys must match [a-z_][a-z0-9_]*'],
    [{ "a.b": 1 }, 'metadata: invalid key "a.b"'],
    [{ "1a": 1 }, 'metadata: invalid key "1a"'],
    [{ "": 1 }, 'metadata: invalid key ""'],
    [{ ["k".repeat(129)]: 1 }, "metadata: invalid key"],
    [JSON.parse('{"__proto__": {"x": 1}}'), 'metadata: invalid key "__proto__"'],
    [Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, i])), "metadata: at most 64 keys allowed, got 65"],
    [Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`k${i}`, "x".repeat(8000)])), "bytes of JSON, more than 65536"],
    [[1, 2], "metadata: expected a JSON object"],
    [null, "metadata: expected a JSON object"],
    ["{}", "metadata: expected a JSON object"],
  ])("rejects %j", (input, message) => {
    expect(rejection(() => parseMetadata(input))).toContain(message);
  });

  it("reports several problems at once", () => {
    expect(rejection(() => parseMetadata({ priority: "x", flag: 1 }))).toBe(
      'metadata.priority: expected an integer; received "x"; metadata.flag: expected a boolean (true or false); received 1',
    );
  });

  it("is a zod schema other request schemas can embed", () => {
    expect(metadataSchema.safeParse({ priority: 2 }).success).toBe(true);
    expect(metadataSchema.safeParse({ priority: 2.5 }).error?.issues[0]?.path).toEqual(["priority"]);
  });
});

describe("parseMetadataJson", () => {
  it("parses the JSON text of the multipart field", () => {
    expect(parseMetadataJson('{"status":"open","priority":1}')).toEqual({ status: "open", priority: 1 });
  });

  it("names the JSON syntax error", () => {
    expect(rejection(() => parseMetadataJson('{"status": open}'))).toMatch(/^metadata: malformed JSON: Unexpected token/);
    expect(rejection(() => parseMetadataJson(""))).toMatch(/^metadata: malformed JSON: Unexpected end of JSON input/);
  });

  it("validates the parsed value", () => {
    expect(rejection(() => parseMetadataJson("[]"))).toBe("metadata: expected a JSON object");
    expect(rejection(() => parseMetadataJson('{"priority":"high"}'))).toBe('metadata.priority: expected an integer; received "high"');
  });

  it("refuses JSON larger than 64 KiB before parsing it", () => {
    expect(rejection(() => parseMetadataJson(`{"a":"${"x".repeat(70_000)}"}`))).toMatch(/^metadata: \d+ bytes of JSON, more than 65536$/);
  });
});
