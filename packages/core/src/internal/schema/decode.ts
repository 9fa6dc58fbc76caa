/**
 * Decoding an action's arguments: what a caller or a model sent, coerced
 * (`coerce.ts`) and then decoded by the action's `parameters` schema, its
 * failures gathered into one `ValidationError` (`issues.ts`). An MCP tool's
 * JSON Schema `inputSchema` is turned into such a schema by
 * `fromJsonSchema.ts`.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Result from "effect/Result"
import type * as Schema from "effect/Schema"
import type * as SchemaAST from "effect/SchemaAST"
import type * as SchemaIssue from "effect/SchemaIssue"
import * as SchemaParser from "effect/SchemaParser"
import type { ValidationError } from "../../ActionError.ts"
import * as Predicate from "effect/Predicate"
import { type Coerce, compile, jsonIn } from "./coerce.ts"
import { show, toValidationError, validationError } from "./issues.ts"

interface Compiled {
  readonly coerce: Coerce
  readonly decode: (input: unknown) => Effect.Effect<unknown, SchemaIssue.Issue, unknown>
}

/** Coercer and decoder by the user schema's AST. */
const compiledBySchema = new WeakMap<SchemaAST.AST, Compiled>()

const compiledOf = (schema: Schema.Top): Compiled => {
  let compiled = compiledBySchema.get(schema.ast)
  if (compiled === undefined) {
    const decodeAll = SchemaParser.decodeUnknownEffect(schema, { errors: "all" })
    compiled = { coerce: compile(schema.ast), decode: (input) => decodeAll(input) }
    compiledBySchema.set(schema.ast, compiled)
  }
  return compiled
}

/**
 * Options of {@link decode}.
 *
 * - `action`: the name of the action being called; it goes into the
 *   `ValidationError` (`action` field and message).
 *
 * @since 0.1.0
 */
export interface DecodeOptions {
  readonly action: string
}

/**
 * Validates and converts raw arguments against an action's `parameters`
 * schema.
 *
 * `input` is what the caller or model sent: an object, or a string holding a
 * JSON object (decoded once). Anything else fails with one issue at path `""`,
 * `arguments must be an object, got …`. The input is coerced guided by the
 * schema's encoded side (`SchemaAST.toEncoded`), so a field declared
 * `Schema.NumberFromString` or `Schema.DateFromString` still receives its
 * string; then the user's schema decodes it with `errors: "all"`:
 *
 * - numbers: numeric strings trimmed and parsed (`" 42 "` → 42, `"1e3"` →
 *   1000); `""`, `"abc"`, `"NaN"`, `"Infinity"`, `"1e999"`, booleans and arrays
 *   are rejected; checks such as `Schema.Int` stay with the decoder, so `"3.5"`
 *   fails as `expected an integer, got "3.5"`;
 * - booleans: `"true"` / `"false"` in any case; nothing else (no truthiness);
 * - literals, `Schema.Literals`, `Schema.Enum`: exact, else the unique
 *   case-insensitive match (`"Celsius"` → `"celsius"`); ambiguous or partial
 *   matches are rejected;
 * - structs, records, tuples and arrays are walked element-wise; a JSON string
 *   where an object or array is expected is decoded once; undeclared keys are
 *   dropped (the decoder's default);
 * - unions (`Schema.NullOr`, `Schema.optional`, …): a value that already
 *   satisfies a member is left alone; otherwise a coercion is used only when
 *   one member's is unambiguous;
 * - `Schema.Unknown`, `Schema.Any`, declarations and strings are left alone;
 *   `Schema.suspend` (recursive schemas) is followed lazily.
 *
 * The caller's input is never mutated. The coercer and decoder are compiled
 * once per schema (cached by its AST), so a call is one walk plus the decode.
 *
 * Errors: `ValidationError` whose `issues` hold one `{ path, message }` per
 * failing leaf, `path` like `guests[1].age` (root `""`), message like
 * `missing` or `expected one of "celsius" | "fahrenheit", got "kelvin"`
 * (quoted values cut to 40 characters); its `message` reads
 * `Invalid arguments for <action>: guests[1].age: expected an integer, got "3.5"; name: missing`.
 *
 * Requires the schema's `DecodingServices` (none for plain schemas).
 *
 * For example:
 * ```
 * import { Effect, Schema } from "effect"
 * import * as Conversion from "./decode.ts"
 *
 * const Parameters = Schema.Struct({
 *   id: Schema.Int,
 *   unit: Schema.Literals(["celsius", "fahrenheit"]),
 *   includeArchived: Schema.optionalKey(Schema.Boolean)
 * })
 *
 * const program = Conversion.decode(
 *   Parameters,
 *   { id: "1458", unit: "Celsius", includeArchived: "false" },
 *   { action: "getReading" }
 * )
 * // Effect.runSync(program) → { id: 1458, unit: "celsius", includeArchived: false }
 * ```
 *
 * @since 0.1.0
 */
export const decode = <S extends Schema.Top>(
  parameters: S,
  input: unknown,
  options: DecodeOptions
): Effect.Effect<S["Type"], ValidationError, S["DecodingServices"]> => {
  // Decoded at once, not when run: a schema that decodes synchronously gives an `Exit`, and a success is
  // returned as it is, so the pipeline takes its value without a trip through the runtime.
  const root = typeof input === "string" ? (jsonIn(input, "{") ?? input) : input
  if (!Predicate.isObject(root)) {
    return Effect.fail(
      validationError(options.action, [{ path: "", message: `arguments must be an object, got ${show(input)}` }])
    )
  }
  const compiled = compiledOf(parameters)
  const attempted = Result.try(() => compiled.decode(compiled.coerce(root)))
  // A throw while coercing or decoding is a defect, as it was when this ran inside `Effect.suspend`.
  if (Result.isFailure(attempted)) return Effect.die(attempted.failure)
  // The cache forgets the schema's type; the decoder was built from `parameters` itself.
  const decoded = attempted.success as Effect.Effect<S["Type"], SchemaIssue.Issue, S["DecodingServices"]>
  if (Exit.isExit(decoded) && Exit.isSuccess(decoded)) return decoded as Exit.Exit<S["Type"], never>
  return Effect.mapError(decoded, (issue) => toValidationError(options.action, issue, root))
}
