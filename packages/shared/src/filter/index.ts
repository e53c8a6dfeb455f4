export type { Clause, CompareOp, Condition, Filter, Group, Operator, OrderTerm, TextOp, Value } from "./ast.ts";
export { FIELD_NAME } from "./ast.ts";
export { parseFilter, MAX_FILTER_LENGTH } from "./parse.ts";
export { evaluate } from "./evaluate.ts";
export { compareForOrder } from "./order.ts";
export { compareCodePoints } from "./compare.ts";
export { knownFieldType } from "./values.ts";
export { compileToSql, type CompiledSql } from "./sql.ts";
export { registerFilterFunctions } from "./sql-functions.ts";
