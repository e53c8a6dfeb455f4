import { describe, expect, it } from "vitest";
import { MAX_FILTER_LENGTH } from "./parse.ts";
import { syntaxError as rejected } from "../../test-support/filter-errors.ts";

const syntaxError = (s: string) => rejected(s, new Date("2024-06-15T12:00:00Z"));

// Every error of docs/filters.md "Errors", plus the ones the grammar implies.
describe("parseFilter: errors name the problem and its position", () => {
  it.each([
    ["status", 6, /condition without an operator: "status"/],
    ["a=1^status", 10, /condition without an operator/],
    ["status~open", 6, /unknown operator "~"/],
    ["statusCONTAINSopen", 6, /unknown operator "CONTAINS"/],
    ["statusNOTINa", 6, /unknown operator "NOTIN"/],
    ["^status=open", 0, /leading \^/],
    ["^^status=open", 0, /leading \^/],
    ["status=open^", 11, /trailing \^/],
    ["ORDERBYa^^b=1", 9, /empty condition/],
    ["a=1^OR", 3, /dangling \^OR/],
    ["a=1^OR^b=2", 3, /dangling \^OR/],
    ["a=1^NQ", 3, /empty \^NQ group/],
    ["a=1^NQ^b=2", 3, /empty \^NQ group/],
    ["a=1^NQ^EQ", 3, /empty \^NQ group/],
    ["priority>high", 9, /priority: expected an integer, got "high"/],
    ["priority=1.5", 9, /expected an integer/],
    ["priority=99999999999999999999", 9, /expected an integer/],
    ["priorityIN1,x", 12, /expected an integer, got "x"/],
    ["priorityBETWEEN1@x", 17, /expected an integer/],
    ["flag=yes", 5, /flag: expected true or false, got "yes"/],
    ["flag=TRUE", 5, /expected true or false/],
    ["created>yesterday", 8, /created: expected a date/],
    ["priorityBETWEEN2", 15, /BETWEEN needs exactly one @.*found 0/],
    ["priorityBETWEEN2@3@4", 18, /BETWEEN needs exactly one @.*found 2/],
    ["nBETWEEN@3", 8, /missing its low value/],
    ["nBETWEEN3@", 10, /missing its high value/],
    ["statusISEMPTYx", 13, /ISEMPTY takes no value, found "x"/],
    ["statusISNOTEMPTY^^", 16, /ISNOTEMPTY takes no value/],
    ["statusANYTHINGx", 14, /ANYTHING takes no value/],
    ["statusIN", 8, /empty IN list/],
    ["statusNOT IN^a=1", 12, /empty NOT IN list/],
    ["statusINa,,b", 10, /empty item in IN list/],
    ["=open", 0, /missing field name before operator "="/],
    ["a=1^!=open", 4, /missing field name/],
    ["Status=open", 0, /expected a field name, found "S"/],
    ["1abc=x", 0, /invalid field name "1abc"/],
    ["a..b=x", 0, /invalid field name "a..b"/],
    ["statusSAMEAS", 12, /missing field name after SAMEAS/],
    ["statusSAMEASPrev", 12, /invalid field name "Prev" after SAMEAS/],
    ["ORDERBY", 7, /missing field name after ORDERBY/],
    ["ORDERBYDESC", 11, /missing field name after ORDERBYDESC/],
    ["ORDERBYa b", 8, /unexpected " " after ORDERBYa/],
    ["ORDERBYa^ORb=1", 8, /\^OR must follow a condition/],
    ["a=1^ORORDERBYb", 6, /\^OR must be followed by a condition/],
    ["a=1^EQ^b=2", 3, /\^EQ is only allowed at the end/],
    ["^EQ", 0, /leading \^/],
    ["a=x\ud800", 3, /unpaired surrogate/],
  ])("%s", (input, position, message) => {
    const err = syntaxError(input);
    expect(err.position).toBe(position);
    expect(err.message).toMatch(message);
    expect(err.message).toMatch(new RegExp(`at position ${position}$`));
    expect(err.kind).toBe("invalid");
  });

  it("rejects filters longer than the limit", () => {
    expect(syntaxError(`a=${"x".repeat(MAX_FILTER_LENGTH)}`).position).toBe(MAX_FILTER_LENGTH);
  });
});
