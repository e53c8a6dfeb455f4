/**
 * Chunk rows (lancedb-rows.ts) as an Arrow table, built column by column straight into typed
 * buffers. LanceDB's own conversion of plain objects (`makeArrowTable`) transposes the rows and
 * appends every value through Arrow's builders, one TextEncoder call per string: several times
 * slower (docs/benchmarks.md). This covers the types
 * of tableSchema only, and says so for any other.
 */
import {
  type Data,
  DataType,
  type Field,
  RecordBatch,
  type Schema,
  Struct,
  Table,
  makeData,
  type Bool,
  type FixedSizeList,
  type Float32,
  type Int,
  type List,
  type Utf8,
} from "apache-arrow";
import type { Row } from "./lancedb-rows.ts";

/** The table of `rows` under `schema`: each field's value is read from the row by its name. */
export function rowsTable(rows: readonly Row[], schema: Schema): Table {
  const children = schema.fields.map((field) =>
    columnData(
      field,
      rows.map((row) => row[field.name]),
    ),
  );
  const data = makeData({ type: new Struct(schema.fields), length: rows.length, nullCount: 0, children });
  return new Table([new RecordBatch(schema, data)]);
}

function columnData(field: Field, values: unknown[]): Data {
  const type = field.type as DataType;
  if (DataType.isUtf8(type)) return utf8Data(type, values as (string | null | undefined)[]);
  if (DataType.isInt(type)) return intData(type, values as (number | bigint | null | undefined)[]);
  if (DataType.isBool(type)) return boolData(type, values as (boolean | null | undefined)[]);
  if (DataType.isList(type)) return listData(type, values as (string[] | null | undefined)[]);
  if (DataType.isFixedSizeList(type)) return vectorData(type, values as (ArrayLike<number> | null | undefined)[]);
  throw new Error(`rowsTable: no builder for column ${field.name} of type ${String(type)}`);
}

/** The validity bitmap of `values` (a set bit for each value present) and how many are missing. */
function validity(values: readonly unknown[]): { nullBitmap: Uint8Array | undefined; nullCount: number } {
  let nullCount = 0;
  for (const v of values) if (v === null || v === undefined) nullCount++;
  if (nullCount === 0) return { nullBitmap: undefined, nullCount };
  const nullBitmap = new Uint8Array((values.length + 7) >> 3);
  values.forEach((v, i) => {
    if (v !== null && v !== undefined) nullBitmap[i >> 3]! |= 1 << (i & 7);
  });
  return { nullBitmap, nullCount };
}

function utf8Data(type: Utf8, values: readonly (string | null | undefined)[]): Data<Utf8> {
  const valueOffsets = new Int32Array(values.length + 1);
  // Sized exactly: memory allocated outside the JavaScript heap brings V8's full collections on.
  let size = 0;
  for (const v of values) if (typeof v === "string") size += Buffer.byteLength(v, "utf8");
  const bytes = Buffer.allocUnsafeSlow(size);
  let at = 0;
  values.forEach((v, i) => {
    if (typeof v === "string") at += bytes.write(v, at, "utf8");
    valueOffsets[i + 1] = at;
  });
  return makeData({ type, length: values.length, ...validity(values), valueOffsets, data: new Uint8Array(bytes.buffer, 0, at) });
}

function intData(type: Int, values: readonly (number | bigint | null | undefined)[]): Data<Int> {
  const data = new type.ArrayType(values.length);
  values.forEach((v, i) => {
    if (v !== null && v !== undefined) data[i] = (type.bitWidth === 64 ? BigInt(v) : Number(v)) as never;
  });
  return makeData({ type, length: values.length, ...validity(values), data });
}

function boolData(type: Bool, values: readonly (boolean | null | undefined)[]): Data<Bool> {
  const data = new Uint8Array((values.length + 7) >> 3);
  values.forEach((v, i) => {
    if (v === true) data[i >> 3]! |= 1 << (i & 7);
  });
  return makeData({ type, length: values.length, ...validity(values), data });
}

function listData(type: List, values: readonly (string[] | null | undefined)[]): Data<List> {
  const child = type.children[0]!;
  if (!DataType.isUtf8(child.type)) throw new Error(`rowsTable: no builder for lists of ${String(child.type)}`);
  const valueOffsets = new Int32Array(values.length + 1);
  const items: string[] = [];
  values.forEach((v, i) => {
    if (v) items.push(...v);
    valueOffsets[i + 1] = items.length;
  });
  return makeData({ type, length: values.length, ...validity(values), valueOffsets, child: utf8Data(child.type as Utf8, items) });
}

function vectorData(type: FixedSizeList, values: readonly (ArrayLike<number> | null | undefined)[]): Data<FixedSizeList> {
  const child = type.children[0]! as Field<Float32>;
  if (!DataType.isFloat(child.type)) throw new Error(`rowsTable: no builder for fixed-size lists of ${String(child.type)}`);
  const size = type.listSize;
  const data = new Float32Array(values.length * size);
  values.forEach((v, i) => {
    if (v) data.set(v, i * size);
  });
  const floats = makeData({ type: child.type, length: data.length, nullCount: 0, data });
  return makeData({ type, length: values.length, ...validity(values), child: floats });
}
