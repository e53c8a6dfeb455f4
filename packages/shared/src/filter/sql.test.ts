import { afterAll, describe, expect, it } from "vitest";
import type { Metadata } from "../domain/metadata.ts";
import type { Filter } from "./ast.ts";
import { evaluate } from "./evaluate.ts";
import { MAX_FILTER_LENGTH, parseFilter } from "./parse.ts";
import { compileToSql } from "./sql.ts";
import { FilterTestDb } from "../../test-support/filter-test-db.ts";

const NOW = new Date("2024-06-15T12:00:00Z");
const DOCS: Metadata[] = [
  { sys_id: "a1", status: "open", type: "Weekly Report", priority: 2, flag: true, created: "2024-05-10T08:30:00Z", tags: ["alpha", "Beta", 3] },
  { sys_id: "a2", status: "closed", prev_status: "open", priority: 5, flag: false, created: "2024-04-01T00:00:00Z", tags: [] },
  { sys_id: "a3", status: "pending", prev_status: "pending", type: "memo", created: "2024-05-31T23:59:59Z", n: 1e21 },
  { status: "", n: 10, s: "10", big: 2 ** 62, quote: "it's \"quoted\" ^ %_" },
  { type: "report", priority: -1, n: 9.5, s: "9", city: "İstanbul", tags: [false, "x"] },
  {},
];

const db = new FilterTestDb();
db.load(DOCS);
afterAll(() => db.close());

/** Ids the evaluator accepts, sorted by id. */
const reference = (filter: Filter) => DOCS.flatMap((d, i) => (evaluate(filter, d) ? [i + 1] : []));
const sqlIds = (filter: Filter) => db.select(filter).sort((a, b) => a - b);

describe("compileToSql", () => {
  it("compiles the empty filter to 1", () => {
    expect(compileToSql(parseFilter(""), { metadataColumn: "d.metadata" })).toEqual({ where: "1", params: [], orderBy: [], orderParams: [] });
  });

  it.each([
    "status=open^priority=2",
    "type=memo^status=open^ORstatus=pending",
    "status=open^NQflag=true",
    "priorityBETWEEN2@4^createdBETWEEN2024-05-01@2024-05-31",
    "typeLIKEreport^statusNOT INclosed,archived^ORDERBYDESCcreated",
    "status!=open", "priority<3", "priority<=2", "priority>2", "priority>=-1", "priorityIN2,5", "priorityNOT IN2,5",
    "typeNOTLIKEREPORT", "typeSTARTSWITHweek", "typeENDSWITHORT", "statusISEMPTY", "statusISNOTEMPTY", "status=", "status!=",
    "tagsISEMPTY", "tagsISNOTEMPTY", "tags=alpha", "tags=3", "tags=false", "tags!=x", "tagsLIKEbeta", "statusANYTHING",
    "statusSAMEASprev_status", "statusNSAMEASprev_status", "nLIKE1e+21", "n>9", "s>9", "n=10.0", "big=4611686018427387904",
    "big<4611686018427387904", "big>4611686018427387903", "cityLIKEistanbul", "quote=it's \"quoted\" ^^ %_", "quoteLIKE%_",
    "createdBETWEENjavascript:gs.daysAgoStart(40)@javascript:gs.endOfToday()", "created<javascript:gs.daysAgo(70)",
    "a.bISEMPTY", "flag=false^ORpriority=-1",
  ])("%s selects what the evaluator accepts", (text) => {
    const filter = parseFilter(text, NOW);
    expect(sqlIds(filter)).toEqual(reference(filter));
  });

  it("binds every value and field name instead of splicing it into the SQL", () => {
    const text = "sys_id='; DROP TABLE d; --^ORtypeINx'),y^ORtypeLIKE%'^ORDERBYsys_id";
    const sql = compileToSql(parseFilter(text), { metadataColumn: "d.metadata" });
    expect(sql.where).not.toMatch(/DROP|sys_id|"type"|x'|%/);
    expect(sql.orderBy.join()).not.toMatch(/sys_id/);
    expect(sql.params).toContain("'; DROP TABLE d; --");
    expect(sql.params).toContain('$."sys_id"');
    expect(db.select(parseFilter(text))).toEqual([]);
    expect(db.select(parseFilter(""))).toHaveLength(DOCS.length);
  });

  it("orders with its own parameters, bound after those of the WHERE clause", () => {
    const filter = parseFilter("priorityISNOTEMPTY^ORtypeISNOTEMPTY^ORDERBYDESCpriority^ORDERBYtype", NOW);
    const sql = compileToSql(filter, { metadataColumn: "d.metadata" });
    expect(sql.orderBy).toHaveLength(4);
    expect(sql.orderParams.length).toBeGreaterThan(0);
    expect(db.select(filter)).toEqual([2, 1, 5, 3]);
  });

  it("rejects a metadata column that is not a plain column reference", () => {
    expect(() => compileToSql(parseFilter("a=1"), { metadataColumn: "d.metadata) OR (1" })).toThrow(/not a column reference/);
  });

  it("rejects a hand-built AST with a field name that could change the JSON path", () => {
    const filter: Filter = { groups: [[[{ op: "ISEMPTY", field: 'a"."b' }]]], orderBy: [] };
    expect(() => compileToSql(filter, { metadataColumn: "d.metadata" })).toThrow(/invalid field name/);
  });

  it("runs filters of the maximum length within SQLite's depth and parameter limits", () => {
    const many = (condition: string, separator: string) => {
      const count = Math.floor((MAX_FILTER_LENGTH + separator.length) / (condition.length + separator.length));
      return Array.from({ length: count }, () => condition).join(separator);
    };
    const longIn = `sIN${many("1", ",").slice(4)}`;
    for (const text of [many("n=1", "^"), many("n=1", "^OR"), many("n=1", "^NQ"), many("nBETWEEN1@2", "^"), longIn]) {
      expect(text.length).toBeLessThanOrEqual(MAX_FILTER_LENGTH);
      const filter = parseFilter(text, NOW);
      expect(sqlIds(filter)).toEqual(reference(filter));
    }
  });
});
