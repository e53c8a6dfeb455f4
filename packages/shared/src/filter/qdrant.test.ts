import { describe, expect, it } from "vitest";
import type { Schemas } from "@qdrant/js-client-rest";
import { parseFilter } from "./parse.ts";
import { compileFilter, type CompiledFilter } from "./qdrant.ts";

const NOW = new Date("2024-05-03T12:00:00Z");
const compile = (text: string): CompiledFilter => compileFilter(parseFilter(text, NOW));
const exact = (condition: Schemas["Condition"] | boolean): CompiledFilter => ({ condition, exact: true });
const loose = (condition: Schemas["Condition"] | boolean): CompiledFilter => ({ condition, exact: false });

const m = (field: string) => `metadata.${field}`;
const hasValue = (field: string): Schemas["Condition"] => ({ must_not: [{ is_empty: { key: m(field) } }] });
const empty = (field: string): Schemas["Condition"] => ({
  should: [{ is_empty: { key: m(field) } }, { key: "meta_blank", match: { value: field } }],
});

describe("filter compiler: exact conditions", () => {
  it("matches everything for the empty filter and ORDERBY-only filters", () => {
    expect(compile("")).toEqual(exact(true));
    expect(compile("ORDERBYpriority")).toEqual(exact(true));
  });

  it("compiles equality by the field's stored type", () => {
    expect(compile("status=open")).toEqual(exact({ key: m("status"), match: { value: "open" } }));
    expect(compile("typeINdb2,sql server")).toEqual(exact({ key: m("type"), match: { any: ["db2", "sql server"] } }));
    expect(compile("priority=+2")).toEqual(exact({ key: m("priority"), match: { value: 2 } }));
    expect(compile("priorityIN1,3,5")).toEqual(exact({ key: m("priority"), match: { any: [1, 3, 5] } }));
    expect(compile("created=2024-05-01")).toEqual(
      exact({ key: m("created"), range: { gte: "2024-05-01T00:00:00Z", lte: "2024-05-01T00:00:00Z" } }),
    );
    expect(compile("flag=true")).toEqual(exact({ key: m("flag"), match: { value: true } }));
  });

  it("matches an untyped value as a string, a number (as a double) and a boolean", () => {
    expect(compile("score=10")).toEqual(
      exact({
        should: [
          { key: m("score"), match: { value: "10" } },
          { key: m("score"), range: { gte: 10, lte: 10 } },
        ],
      }),
    );
    expect(compile("score=1.5e1")).toEqual(
      exact({
        should: [
          { key: m("score"), match: { value: "1.5e1" } },
          { key: m("score"), range: { gte: 15, lte: 15 } },
        ],
      }),
    );
    expect(compile("tags=b")).toEqual(exact({ key: m("tags"), match: { value: "b" } }));
    expect(compile("mixINtrue,x")).toEqual(
      exact({
        should: [
          { key: m("mix"), match: { any: ["true", "x"] } },
          { key: m("mix"), match: { value: true } },
        ],
      }),
    );
  });

  it("negates with must_not, which also holds when the field is missing", () => {
    expect(compile("status!=open")).toEqual(exact({ must_not: [{ key: m("status"), match: { value: "open" } }] }));
    expect(compile("priorityNOT IN1,3")).toEqual(exact({ must_not: [{ key: m("priority"), match: { any: [1, 3] } }] }));
  });

  it("compiles ranges on priority and created exactly", () => {
    expect(compile("priority>2")).toEqual(exact({ key: m("priority"), range: { gt: 2 } }));
    expect(compile("priorityBETWEEN2@4")).toEqual(exact({ key: m("priority"), range: { gte: 2, lte: 4 } }));
    expect(compile("created<=javascript:gs.daysAgoStart(1)")).toEqual(exact({ key: m("created"), range: { lte: "2024-05-02T00:00:00Z" } }));
    expect(compile("createdBETWEEN2024-05-01@2024-05-31")).toEqual(
      exact({ key: m("created"), range: { gte: "2024-05-01T00:00:00Z", lte: "2024-05-31T00:00:00Z" } }),
    );
  });

  it("answers every operator on flag from its two possible values", () => {
    expect(compile("flag>false")).toEqual(exact({ key: m("flag"), match: { value: true } }));
    expect(compile("flag>=false")).toEqual(
      exact({
        should: [
          { key: m("flag"), match: { value: true } },
          { key: m("flag"), match: { value: false } },
        ],
      }),
    );
    expect(compile("flagLIKEru")).toEqual(exact({ key: m("flag"), match: { value: true } }));
    expect(compile("flag<false")).toEqual(exact(false));
    expect(compile("flag!=true")).toEqual(exact({ must_not: [{ key: m("flag"), match: { value: true } }] }));
  });

  it("uses the derived lists for ISEMPTY and SAMEAS", () => {
    expect(compile("noteISEMPTY")).toEqual(exact(empty("note")));
    expect(compile("note=")).toEqual(exact(empty("note")));
    expect(compile("noteISNOTEMPTY")).toEqual(exact({ must_not: [empty("note")] }));
    expect(compile("statusSAMEASprev_status")).toEqual(exact({ key: "meta_same", match: { value: "prev_status=status" } }));
    expect(compile("prev_statusNSAMEASstatus")).toEqual(
      exact({ must_not: [{ key: "meta_same", match: { value: "prev_status=status" } }] }),
    );
    expect(compile("statusSAMEASstatus")).toEqual(exact({ key: "meta_keys", match: { value: "status" } }));
  });

  it("folds conditions on dotted fields (always missing) and ANYTHING", () => {
    expect(compile("a.b=1")).toEqual(exact(false));
    expect(compile("a.b!=1")).toEqual(exact(true));
    expect(compile("a.bISEMPTY^statusSAMEASa.b")).toEqual(exact(false));
    expect(compile("statusANYTHING")).toEqual(exact(true));
    expect(compile("status=open^ORstatusANYTHING")).toEqual(exact(true));
  });

  it("keeps the precedence: ^OR binds tightest, then ^, then ^NQ", () => {
    const is = (f: string, v: string): Schemas["Condition"] => ({ key: m(f), match: { value: v } });
    expect(compile("status=a^ORstatus=b^type=c^NQtype=d")).toEqual(
      exact({ should: [{ must: [{ should: [is("status", "a"), is("status", "b")] }, is("type", "c")] }, is("type", "d")] }),
    );
  });
});

describe("filter compiler: supersets for what Qdrant cannot express", () => {
  it("narrows substring and alphabetical conditions to fields that have a value", () => {
    expect(compile("noteLIKEreport")).toEqual(loose(hasValue("note")));
    expect(compile("typeSTARTSWITHre")).toEqual(loose(hasValue("type")));
    expect(compile("createdENDSWITH00Z")).toEqual(loose(hasValue("created")));
    expect(compile("status<m")).toEqual(loose(hasValue("status")));
    expect(compile("score>9")).toEqual(loose(hasValue("score")));
    expect(compile("scoreBETWEEN1@5")).toEqual(loose(hasValue("score")));
  });

  it("is exact for an empty needle: every value contains the empty string", () => {
    expect(compile("noteLIKE")).toEqual(exact(hasValue("note")));
    expect(compile("noteNOT LIKE")).toEqual(exact({ is_empty: { key: m("note") } }));
  });

  it("never drops a condition under a negation: NOT LIKE becomes match-all, not match-none", () => {
    expect(compile("noteNOT LIKEreport")).toEqual(loose(true));
    expect(compile("status=open^noteNOT LIKEreport")).toEqual(loose({ key: m("status"), match: { value: "open" } }));
  });

  it("keeps the exact parts of a mixed filter", () => {
    expect(compile("status=open^ORnoteLIKEx")).toEqual(
      loose({ should: [{ key: m("status"), match: { value: "open" } }, hasValue("note")] }),
    );
    expect(compile("noteLIKEx^ORstatusANYTHING")).toEqual(exact(true));
    expect(compile("noteLIKEx^flag<false")).toEqual(exact(false));
  });
});
