import { describe, expect, it } from "vitest";
import { parseFilter } from "./parse.ts";
import { filterTypos } from "./typos.ts";
import { closestName } from "../domain/suggest.ts";

const fields = new Set(["status", "priority", "type", "owner"]);
const typos = (text: string, present: ReadonlySet<string> | null = fields) => filterTypos(parseFilter(text), present);

describe("filterTypos", () => {
  it("says nothing about a filter that reads as meant", () => {
    expect(typos("")).toEqual([]);
    expect(typos("status=open^priority>=2^ORDERBYDESCpriority")).toEqual([]);
    expect(typos("typeINmemo,report^ownerLIKEann^statusSAMEASowner")).toEqual([]);
    expect(typos("status=a=b c")).toEqual([]); // an `=` inside a value is ordinary
  });

  it("flags a value that starts with an operator character, with the condition meant", () => {
    expect(typos("status==open")).toEqual([
      'status: the value "=open" starts with "=", an operator character, and is compared as written; to compare with "open", write status=open',
    ]);
    expect(typos("status!==closed")).toEqual([expect.stringContaining("write status!=closed")]);
    expect(typos("typeIN>memo,report")).toEqual([expect.stringMatching(/^type: the value ">memo" starts with ">"/)]);
    expect(typos("owner=<x")).toEqual([expect.not.stringContaining("write")]);
  });

  it("flags a value that ends with a lone ^ (a doubled ^ is a literal one)", () => {
    expect(typos("status=open^^")).toEqual([expect.stringMatching(/^status: the value "open\^" ends with "\^"/)]);
    expect(typos("status=op^^en")).toEqual([]);
  });

  it("flags a condition written after a doubled ^ or an &, which are part of the value", () => {
    expect(typos("status=open^^priority=2")).toEqual([
      'status: the value "open^priority=2" holds "^priority=2" because "^^" in a value is a literal "^", so status is compared with all of it, not with "open"; to join two conditions, write one "^" between them',
    ]);
    expect(typos("status=open&priority=2")).toEqual([
      'status: the value "open&priority=2" holds "&priority=2" because "&" joins nothing in a filter, so status is compared with all of it, not with "open"; to join two conditions, write one "^" between them',
    ]);
    expect(typos("typeINmemo,report&ownerLIKEann")).toEqual([
      expect.stringMatching(/^type: the value "report&ownerLIKEann" holds "&ownerLIKEann"/),
    ]);
    expect(typos("status=R&D^owner=a^^b")).toEqual([]);
  });

  it("flags fields no document has, with the closest present one", () => {
    expect(typos("stauts=open")).toEqual(["stauts: no document in the searched collections has this field; did you mean status?"]);
    expect(typos("status=open^ORDERBYcolour")).toEqual(["colour: no document in the searched collections has this field"]);
    expect(typos("statusSAMEASowners")).toEqual([expect.stringMatching(/^owners: .*did you mean owner\?/)]);
    expect(typos("stauts=open", null)).toEqual([]);
    expect(typos("status=open", new Set())).toEqual(["status: no document in the searched collections has this field"]);
  });
});

describe("closestName", () => {
  it("suggests a name a few edits away, and nothing far", () => {
    expect(closestName("collection_name", ["collection_names", "query", "k"])).toBe("collection_names");
    expect(closestName("metdata", ["metadata", "text"])).toBe("metadata");
    expect(closestName("Metadata", ["metadata"])).toBe("metadata");
    expect(closestName("filter", ["metadata", "collection_names"])).toBeUndefined();
    expect(closestName("k", ["k"])).toBeUndefined();
  });
});
