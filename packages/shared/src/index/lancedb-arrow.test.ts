import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { makeArrowTable } from "@lancedb/lancedb";
import { rowsTable } from "./lancedb-arrow.ts";
import { tableSchema, type Row } from "./lancedb-rows.ts";
import { DataType, Field, Float64, Schema } from "apache-arrow";

/** A value for a field of the chunk table, null where the field allows it. */
function valueOf(field: Field): fc.Arbitrary<unknown> {
  const type = field.type as DataType;
  const text = fc.string({ unit: "binary", maxLength: 40 }); // lone surrogates and NUL included
  let value: fc.Arbitrary<unknown>;
  if (DataType.isUtf8(type)) value = text;
  else if (DataType.isInt(type) && type.bitWidth === 64) value = fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n });
  else if (DataType.isInt(type)) value = fc.integer({ min: -(2 ** (type.bitWidth - 1)), max: 2 ** (type.bitWidth - 1) - 1 });
  else if (DataType.isBool(type)) value = fc.boolean();
  else if (DataType.isList(type)) value = fc.array(text, { maxLength: 4 });
  else if (DataType.isFixedSizeList(type))
    value = fc.array(fc.float({ noNaN: true, noDefaultInfinity: true }), { minLength: type.listSize, maxLength: type.listSize });
  else throw new Error(`no generator for ${String(type)}`);
  return field.nullable ? fc.option(value, { nil: null }) : value;
}

const rowsOf = (schema: Schema) =>
  fc.array(fc.record(Object.fromEntries(schema.fields.map((f) => [f.name, valueOf(f)]))) as fc.Arbitrary<Row>, { maxLength: 40 });

/** Every row of a table as plain values, Arrow's own reading of its buffers. */
const plain = (rows: Iterable<{ toJSON(): Record<string, unknown> }>) =>
  [...rows].map((r) =>
    Object.fromEntries(
      Object.entries(r.toJSON()).map(([k, v]) => [
        k,
        v !== null && typeof v === "object" && "toArray" in v ? [...(v as { toArray(): Iterable<unknown> }).toArray()] : v,
      ]),
    ),
  );

describe("rowsTable", () => {
  for (const dimensions of [null, 3]) {
    it(`holds the same values as LanceDB's conversion of the rows, on any rows (vectors: ${dimensions ?? "none"})`, () => {
      const schema = tableSchema(dimensions);
      fc.assert(
        fc.property(rowsOf(schema), (rows) => {
          const ours = rowsTable(rows, schema);
          expect(ours.schema.fields.map((f) => `${f.name} ${String(f.type)} ${f.nullable}`)).toEqual(
            schema.fields.map((f) => `${f.name} ${String(f.type)} ${f.nullable}`),
          );
          expect(ours.numRows).toBe(rows.length);
          expect(plain(ours)).toEqual(plain(makeArrowTable(rows, { schema })));
        }),
        { numRuns: 200 },
      );
    });
  }

  it("refuses a column type it has no builder for", () => {
    const schema = tableSchema(null);
    const odd = new Schema([schema.fields[0]!, new Field("when", new Float64(), true)]);
    expect(() => rowsTable([{ id: "a", when: 1.5 }], odd)).toThrow(/no builder for column when of type Float64/);
  });
});
