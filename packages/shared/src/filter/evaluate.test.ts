import { describe, expect, it } from "vitest";
import type { Metadata } from "../domain/metadata.ts";
import { compareCodePoints } from "./compare.ts";
import { evaluate } from "./evaluate.ts";
import { compareForOrder } from "./order.ts";
import { parseFilter } from "./parse.ts";

const NOW = new Date("2024-06-15T12:00:00Z");
const matches = (filter: string, metadata: Metadata): boolean => evaluate(parseFilter(filter, NOW), metadata);
/** Each filter's answer for one metadata object; a wrong answer names its filter. */
function expectAnswers(metadata: Metadata, answers: [filter: string, expected: boolean][]): void {
  for (const [filter, expected] of answers) expect(matches(filter, metadata), filter).toBe(expected);
}

const memo: Metadata = {
  sys_id: "abc123",
  status: "open",
  prev_status: "open",
  type: "Weekly Report",
  priority: 2,
  flag: true,
  created: "2024-05-10T08:30:00Z",
  tags: ["alpha", "Beta", 3],
  n: 10,
  s: "10",
  empty: "",
  none: [],
};

describe("evaluate", () => {
  it("matches everything with the empty filter", () => {
    expect(matches("", {})).toBe(true);
    expect(matches("ORDERBYpriority", {})).toBe(true);
  });

  it.each([
    ["status=open^priority=2", true],
    ["status=open^priority=3", false],
    ["type=memo^status=open^ORstatus=pending", false],
    ["status=closed^NQflag=true", true],
    ["status=closed^NQflag=false", false],
    ["priorityBETWEEN2@4^createdBETWEEN2024-05-01@2024-05-31", true],
    ["priorityBETWEEN3@4", false],
    ["typeLIKEreport^statusNOT INclosed,archived^ORDERBYDESCcreated", true],
    ["typeLIKEREPORT", true],
    ["typeSTARTSWITHweekly", true],
    ["typeENDSWITHPORT", true],
    ["typeNOT LIKEreport", false],
    ["type=weekly report", false],
    ["status=Open", false],
  ])("%s → %s", (filter, expected) => {
    expect(matches(filter, memo)).toBe(expected);
  });

  it("compares numbers numerically and other values as text", () => {
    expect(matches("n>9", memo)).toBe(true);
    expect(matches("s>9", memo)).toBe(false); // "10" < "9" as text
    expect(matches("n=10.0", memo)).toBe(true);
    expect(matches("s=10.0", memo)).toBe(false);
    expect(matches("n<abc", memo)).toBe(true); // "10" < "abc"
    expect(matches("nLIKE1", memo)).toBe(true);
    expect(matches("priority=+2", memo)).toBe(true);
    expect(matches("flag=true", { flag: true })).toBe(true);
    expect(matches("flag=true", { flag: "true" })).toBe(true);
    expect(matches("x=1e+21", { x: 1e21 })).toBe(true);
    expect(matches("xLIKEe+21", { x: 1e21 })).toBe(true);
    expect(matches("status=5", { status: 5 } as Metadata)).toBe(true);
  });

  it("orders text by code point, not UTF-16 unit", () => {
    expect(matches("s<😀", { s: "\uffff" })).toBe(true);
    expect("\uffff" < "😀").toBe(false);
    expect(compareCodePoints("\uffff", "😀")).toBeLessThan(0);
    expect(compareCodePoints("a", "ab")).toBeLessThan(0);
    expect(compareCodePoints("😀", "😁")).toBeLessThan(0);
  });

  it("folds case with full Unicode lower-casing", () => {
    expect(matches("cityLIKEİSTANBUL", { city: "i̇stanbul" })).toBe(true);
    expect(matches("wLIKEΣ", { w: "σας" })).toBe(true);
    expect(matches("wSTARTSWITHÉ", { w: "école" })).toBe(true);
  });

  it("compares created as instants, offsets and relative dates included", () => {
    expectAnswers(memo, [
      ["created>2024-05-10T10:30:00+02:00", false],
      ["created>2024-05-10T10:29:59+02:00", true],
      ["created>=2024-05-10T10:30:00+02:00", true],
      ["created>javascript:gs.daysAgo(40)", true],
      ["created>javascript:gs.daysAgoStart(30)", false],
      ["createdSTARTSWITH2024-05", true],
    ]);
  });

  it("matches an array when some item matches; negations are exact negations", () => {
    expectAnswers(memo, [
      ["tags=alpha", true],
      ["tags=3", true],
      ["tags!=alpha", false],
      ["tagsINx,Beta", true],
      ["tagsLIKEbet", true],
      ["tags>2", true],
      ["noneLIKE", false],
    ]);
    expect(matches("tagsBETWEEN4@9", { tags: [3, 10] })).toBe(false);
  });

  it("lets !=, NOT IN and NOT LIKE match documents without the field", () => {
    expectAnswers(memo, [
      ["missing!=x", true],
      ["missingNOT INx,y", true],
      ["missingNOT LIKEx", true],
      ["missing=x", false],
      ["missing<x", false],
      ["noneNOT LIKEx", true],
    ]);
  });

  it('treats missing, "" and [] as empty', () => {
    for (const f of ["missing", "empty", "none"]) {
      expect(matches(`${f}ISEMPTY`, memo)).toBe(true);
      expect(matches(`${f}=`, memo)).toBe(true);
      expect(matches(`${f}ISNOTEMPTY`, memo)).toBe(false);
    }
    expect(matches("tagsISEMPTY", memo)).toBe(false);
    expect(matches("xISEMPTY", { x: [""] })).toBe(false);
    expect(matches("status!=", memo)).toBe(true);
    expect(matches("a.bISEMPTY", memo)).toBe(true);
  });

  it("has ANYTHING, SAMEAS and NSAMEAS", () => {
    expect(matches("missingANYTHING", {})).toBe(true);
    expect(matches("statusSAMEASprev_status", memo)).toBe(true);
    expect(matches("nSAMEASs", memo)).toBe(false); // 10 is not "10"
    expect(matches("statusSAMEASmissing", memo)).toBe(false);
    expect(matches("missingSAMEASother", {})).toBe(false);
    expect(matches("missingNSAMEASother", {})).toBe(true);
    expect(matches("aSAMEASb", { a: [1, "x"], b: [1, "x"] })).toBe(true);
    expect(matches("aSAMEASb", { a: [1, "x"], b: ["x", 1] })).toBe(false);
  });

  it("does not see inherited properties as fields", () => {
    expect(matches("constructorISEMPTY", {})).toBe(true);
    expect(matches("__proto__ISNOTEMPTY", {})).toBe(false);
  });
});

describe("compareForOrder", () => {
  const sort = (docs: Metadata[], order: string) => {
    const terms = parseFilter(order, NOW).orderBy;
    return docs
      .map((d, i) => ({ d, i }))
      .sort((a, b) => compareForOrder(a.d, b.d, terms) || a.i - b.i)
      .map(({ i }) => i);
  };
  const docs: Metadata[] = [
    { v: "b" },
    { v: 10 },
    {},
    { v: true },
    { v: 9 },
    { v: "B" },
    { v: false },
    { v: [] },
    { v: [2, "z"] },
    { v: "😀" },
    { v: "\uffff" },
  ];

  it("sorts numbers, then strings by code point, then booleans, missing last", () => {
    expect(sort(docs, "ORDERBYv")).toEqual([8, 4, 1, 5, 0, 10, 9, 6, 3, 2, 7]);
  });

  it("reverses all but the place of missing values for ORDERBYDESC", () => {
    expect(sort(docs, "ORDERBYDESCv")).toEqual([3, 6, 9, 10, 0, 5, 1, 4, 8, 2, 7]);
  });

  it("breaks ties with later terms", () => {
    const rows: Metadata[] = [{ a: 1, b: 2 }, { a: 1, b: 1 }, { a: 0 }, { b: 0 }];
    expect(sort(rows, "ORDERBYa^ORDERBYDESCb")).toEqual([2, 0, 1, 3]);
    expect(sort(rows, "ORDERBYb")).toEqual([3, 1, 0, 2]);
  });
});
