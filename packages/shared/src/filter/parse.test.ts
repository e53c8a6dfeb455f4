import { describe, expect, it } from "vitest";
import type { Condition, Filter } from "./ast.ts";
import { parseFilter } from "./parse.ts";
import { syntaxError as rejected } from "../../test-support/filter-errors.ts";

const NOW = new Date("2024-06-15T13:45:30.900Z");
const parse = (s: string): Filter => parseFilter(s, NOW);
/** The only condition of a one-condition filter. */
const only = (s: string): Condition => {
  const f = parse(s);
  expect(f.groups).toHaveLength(1);
  expect(f.groups[0]).toHaveLength(1);
  expect(f.groups[0]?.[0]).toHaveLength(1);
  return f.groups[0]?.[0]?.[0] as Condition;
};

const syntaxError = (s: string) => rejected(s, NOW);

describe("parseFilter: operators", () => {
  it.each([
    ["note=a=b c", { op: "=", field: "note", value: { text: "a=b c" } }],
    ["status!=open", { op: "!=", field: "status", value: { text: "open" } }],
    ["n<5", { op: "<", field: "n", value: { text: "5", num: 5 } }],
    ["n<=5", { op: "<=", field: "n", value: { text: "5", num: 5 } }],
    ["n>-1.5e3", { op: ">", field: "n", value: { text: "-1.5e3", num: -1500 } }],
    ["n>=x", { op: ">=", field: "n", value: { text: "x" } }],
    ["priorityIN1,3,5", { op: "IN", field: "priority", values: [1, 3, 5].map((n) => ({ text: String(n), num: n })) }],
    ["typeINdb2,sql server", { op: "IN", field: "type", values: [{ text: "db2" }, { text: "sql server" }] }],
    ["statusNOT INclosed,archived", { op: "NOT IN", field: "status", values: [{ text: "closed" }, { text: "archived" }] }],
    ["typeLIKEreport", { op: "LIKE", field: "type", text: "report" }],
    ["typeNOT LIKEreport", { op: "NOT LIKE", field: "type", text: "report" }],
    ["typeNOTLIKEreport", { op: "NOT LIKE", field: "type", text: "report" }],
    ["typeSTARTSWITHRep", { op: "STARTSWITH", field: "type", text: "Rep" }],
    ["typeENDSWITHort", { op: "ENDSWITH", field: "type", text: "ort" }],
    ["priorityBETWEEN2@4", { op: "BETWEEN", field: "priority", low: { text: "2", num: 2 }, high: { text: "4", num: 4 } }],
    ["statusISEMPTY", { op: "ISEMPTY", field: "status" }],
    ["statusISNOTEMPTY", { op: "ISNOTEMPTY", field: "status" }],
    ["statusANYTHING", { op: "ANYTHING", field: "status" }],
    ["statusSAMEASprev_status", { op: "SAMEAS", field: "status", other: "prev_status" }],
    ["statusNSAMEASprev_status", { op: "NSAMEAS", field: "status", other: "prev_status" }],
    ["status=", { op: "ISEMPTY", field: "status" }],
    ["status!=", { op: "ISNOTEMPTY", field: "status" }],
    ["a.b_2=x", { op: "=", field: "a.b_2", value: { text: "x" } }],
  ])("%s", (input, expected) => {
    expect(only(input)).toEqual(expected);
  });

  it("reads the longest operator first", () => {
    expect(only("a<=1").op).toBe("<=");
    expect(only("a<>1")).toEqual({ op: "<", field: "a", value: { text: ">1" } });
    expect(only("a==1")).toEqual({ op: "=", field: "a", value: { text: "=1" } });
    expect(only("aNOT LIKEx").op).toBe("NOT LIKE");
    expect(only("aISNOTEMPTY").op).toBe("ISNOTEMPTY");
  });

  it("keeps the value exactly as written, with ^^ as a literal ^", () => {
    expect(only("note= spaced  ,é😀@ ")).toEqual({ op: "=", field: "note", value: { text: " spaced  ,é😀@ " } });
    expect(only("note=a^^b")).toEqual({ op: "=", field: "note", value: { text: "a^b" } });
    expect(only("note=a^^^^")).toEqual({ op: "=", field: "note", value: { text: "a^^" } });
    expect(parse("note=a^^^b=1").groups[0]).toHaveLength(2);
    expect(only("tagsINa^^b,c")).toEqual({ op: "IN", field: "tags", values: [{ text: "a^b" }, { text: "c" }] });
  });

  it("types numbers only for untyped fields with a decimal value", () => {
    expect(only("n=007")).toEqual({ op: "=", field: "n", value: { text: "007", num: 7 } });
    expect(only("n=.5")).toEqual({ op: "=", field: "n", value: { text: ".5", num: 0.5 } });
    for (const text of ["0x10", "Infinity", " 1", "1 ", "1e400", "", "1,5"]) {
      expect(only(`n<${text}`)).toEqual({ op: "<", field: "n", value: { text } });
    }
    expect(only("status=5")).toEqual({ op: "=", field: "status", value: { text: "5" } });
    expect(only("priority=+02")).toEqual({ op: "=", field: "priority", value: { text: "2", num: 2 } });
    expect(only("priority=-0")).toEqual({ op: "=", field: "priority", value: { text: "0", num: 0 } });
    expect(only("flag=false")).toEqual({ op: "=", field: "flag", value: { text: "false" } });
  });
});

describe("parseFilter: structure and precedence", () => {
  it("matches everything when empty", () => {
    expect(parse("")).toEqual({ groups: [], orderBy: [] });
  });

  it("binds ^OR tighter than ^, and ^ tighter than ^NQ", () => {
    const eq = (field: string, text: string) => ({ op: "=", field, value: { text, num: Number(text) } });
    expect(parse("a=1^ORa=2^b=3").groups).toEqual([[[eq("a", "1"), eq("a", "2")], [eq("b", "3")]]]);
    expect(parse("a=1^b=2^NQc=3").groups).toEqual([[[eq("a", "1")], [eq("b", "2")]], [[eq("c", "3")]]]);
    expect(parse("a=1^b=2^ORc=3^NQd=4^ORe=5").groups).toEqual([
      [[eq("a", "1")], [eq("b", "2"), eq("c", "3")]],
      [[eq("d", "4"), eq("e", "5")]],
    ]);
  });

  it("takes the longest keyword after ^ (ORDERBY starts with OR)", () => {
    const f = parse("a=1^ORd=2^ORDERBYb^ORDERBYDESCc^e=3");
    expect(f.orderBy).toEqual([
      { field: "b", descending: false },
      { field: "c", descending: true },
    ]);
    expect(f.groups).toEqual([
      [
        [
          { op: "=", field: "a", value: { text: "1", num: 1 } },
          { op: "=", field: "d", value: { text: "2", num: 2 } },
        ],
        [{ op: "=", field: "e", value: { text: "3", num: 3 } }],
      ],
    ]);
  });

  it("ignores a trailing ^EQ", () => {
    expect(parse("a=1^b=2^EQ")).toEqual(parse("a=1^b=2"));
    expect(parse("ORDERBYa^EQ")).toEqual({ groups: [], orderBy: [{ field: "a", descending: false }] });
  });

  it("collects ORDERBY terms from any group; an ORDERBY-only group adds no condition", () => {
    expect(parse("ORDERBYDESCcreated")).toEqual({ groups: [], orderBy: [{ field: "created", descending: true }] });
    const f = parse("status=open^NQORDERBYcreated");
    expect(f.groups).toHaveLength(1);
    expect(f.orderBy).toEqual([{ field: "created", descending: false }]);
  });

  it("parses the examples of docs/filters.md", () => {
    expect(parse("status=open^priority=2").groups).toEqual([
      [[{ op: "=", field: "status", value: { text: "open" } }], [{ op: "=", field: "priority", value: { text: "2", num: 2 } }]],
    ]);
    expect(parse("type=memo^status=open^ORstatus=pending").groups[0]?.[1]).toHaveLength(2);
    expect(parse("status=open^NQflag=true").groups).toEqual([
      [[{ op: "=", field: "status", value: { text: "open" } }]],
      [[{ op: "=", field: "flag", value: { text: "true" } }]],
    ]);
    expect(parse("priorityBETWEEN2@4^createdBETWEEN2024-05-01@2024-05-31").groups[0]?.[1]).toEqual([
      { op: "BETWEEN", field: "created", low: { text: "2024-05-01T00:00:00Z" }, high: { text: "2024-05-31T00:00:00Z" } },
    ]);
    const last = parse("typeLIKEreport^statusNOT INclosed,archived^ORDERBYDESCcreated");
    expect(last.groups[0]).toHaveLength(2);
    expect(last.orderBy).toEqual([{ field: "created", descending: true }]);
  });
});

describe("parseFilter: created values", () => {
  const created = (text: string) => (only(`created=${text}`) as { value: { text: string } }).value.text;
  it.each([
    ["2024-05-01T10:00:00Z", "2024-05-01T10:00:00Z"],
    ["2024-05-01 10:00:00", "2024-05-01T10:00:00Z"],
    ["2024-05-01T10:00:00", "2024-05-01T10:00:00Z"],
    ["2024-05-01", "2024-05-01T00:00:00Z"],
    ["2024-05-01T12:00:00+02:00", "2024-05-01T10:00:00Z"],
    ["2024-05-01T00:30:00+01:00", "2024-04-30T23:30:00Z"],
    ["2024-02-29", "2024-02-29T00:00:00Z"],
    ["0099-01-01", "0099-01-01T00:00:00Z"],
    ["javascript:gs.daysAgo(0)", "2024-06-15T13:45:30Z"],
    ["javascript:gs.daysAgo(7)", "2024-06-08T13:45:30Z"],
    ["javascript:gs.daysAgo(-1)", "2024-06-16T13:45:30Z"],
    ["javascript:gs.daysAgoStart(1)", "2024-06-14T00:00:00Z"],
    ["javascript:gs.daysAgoEnd(1)", "2024-06-14T23:59:59Z"],
    ["javascript:gs.beginningOfToday()", "2024-06-15T00:00:00Z"],
    ["javascript:gs.endOfToday()", "2024-06-15T23:59:59Z"],
  ])("%s", (text, canonical) => {
    expect(created(text)).toBe(canonical);
  });

  it.each([
    "yesterday",
    "2024-02-30",
    "2023-02-29",
    "2024-13-01",
    "2024-05-01T24:00:00Z",
    "2024-05-01T10:00:60Z",
    "2024-05-01T10:00Z",
    "2024-05-01T10:00:00.000Z",
    "2024-05-01T10:00:00+24:00",
    "24-05-01",
    "0000-01-01T00:00:00+01:00",
    "javascript:gs.daysAgo()",
    "javascript:gs.daysAgo(1.5)",
    "javascript:gs.nowDateTime()",
    "javascript:gs.daysAgo(99999999)",
    "gs.daysAgo(1)",
  ])("rejects %s", (text) => {
    const err = syntaxError(`created>${text}`);
    expect(err.position).toBe(8);
    expect(err.message).toMatch(/^created: /);
  });
});
