/**
 * The store boundary: what every store of Rolecraft checks on the way in and
 * out, so that a store answers the same whatever holds its data (process
 * memory, SQLite, Postgres) and never with a defect.
 *
 * - Text bound for a store is checked before it is written: a NUL
 *   (`\u0000`, which Postgres cannot keep in `text`), a lone surrogate (half
 *   of a UTF-16 pair, which UTF-8 cannot encode: drivers replace it, so two
 *   such ids would become one row) or text past its cap is refused as
 *   VALIDATION naming the field. Nothing is escaped or rewritten: what a
 *   store holds is what it was given.
 * - A store that cannot be reached or fails (a database stopped or
 *   restarted, a closed connection, a file locked by another process) is
 *   TRANSIENT naming the store: the same operation may succeed later.
 * - A stored row that does not decode (edited by hand, truncated, written
 *   by a newer version) is EXECUTION naming the store, the row and the
 *   field.
 *
 * All three are one error, {@link StoreError}, carrying its category;
 * {@link toActionError} turns it into the action error of a call.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { StoreBoundary } from "@rolecraft/core"
 *
 * const store = "the order store"
 * declare const write: (orderId: string, note: string) => Effect.Effect<void, unknown>
 *
 * const save = (orderId: string, note: string) =>
 *   StoreBoundary.checkText(store, [
 *     { field: "orderId", text: orderId },
 *     { field: "note", text: note, max: StoreBoundary.maxTextLength }
 *   ]).pipe(Effect.andThen(StoreBoundary.guard(store, "write an order", write(orderId, note))))
 * ```
 *
 * @since 0.2.0
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import { ExecutionFailure, TransientFailure, ValidationError } from "./ActionError.ts"
import { expected } from "./internal/expectedError.ts"
import { toValidationError } from "./internal/schema/issues.ts"
import { shorten } from "./internal/text.ts"

/**
 * The categories a store's failure can have.
 *
 * @category schemas
 * @since 0.2.0
 */
export const StoreCategory = Schema.Literals(["VALIDATION", "TRANSIENT", "EXECUTION"])

/**
 * @category models
 * @since 0.2.0
 */
export type StoreCategory = typeof StoreCategory.Type

/**
 * A store refused or failed an operation. `store` names the store (e.g.
 * `"the approval store (SQL)"`), `category` says what kind:
 *
 * - `"VALIDATION"`: text that the store cannot hold; `field` names it.
 *   Not retryable: the same text is refused again.
 * - `"TRANSIENT"`: the store could not be reached or failed. Retryable.
 * - `"EXECUTION"`: a stored row does not decode; `field` names the column
 *   or path. Not retryable.
 *
 * The message never quotes the refused text. `retryable` is `true` only for
 * TRANSIENT.
 *
 * @category errors
 * @since 0.2.0
 */
export class StoreError extends expected(
  Schema.TaggedError<StoreError>()("StoreError", {
    store: Schema.String.pipe(Schema.withConstructorDefault(Effect.succeed("a store"))),
    category: StoreCategory.pipe(Schema.withConstructorDefault(Effect.succeed("TRANSIENT" as const))),
    field: Schema.optionalKey(Schema.String),
    message: Schema.String,
    cause: Schema.optionalKey(Schema.Defect())
  })
) {
  /** Whether the same operation may succeed later: only for TRANSIENT. */
  get retryable(): boolean {
    return this.category === "TRANSIENT"
  }
}

/**
 * The most characters of a name or id a store takes (an agent id, an action
 * or tool name, an approver, a run id): 1,024.
 *
 * @category constants
 * @since 0.2.0
 */
export const maxNameLength = 1_024

/**
 * The most characters of free text a store takes (an approval's reason, a
 * rejection's reason): 65,536.
 *
 * @category constants
 * @since 0.2.0
 */
export const maxTextLength = 65_536

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

const hex = (code: number) => `\\u${code.toString(16).toUpperCase().padStart(4, "0")}`

/**
 * Why a store cannot hold `text`, or `undefined` when it can: too long
 * (more than `max` characters, default {@link maxNameLength}), a NUL, or a
 * lone surrogate, each with where it is. The text itself is never quoted.
 *
 * @category getters
 * @since 0.2.0
 */
export const textProblem = (text: string, max: number = maxNameLength): string | undefined => {
  if (text.length > max) return `is ${text.length} characters long; a store takes at most ${max}`
  const nul = text.indexOf("\u0000")
  if (nul !== -1) return `holds a NUL character (\\u0000) at index ${nul}, which a store cannot keep`
  const at = text.search(LONE_SURROGATE)
  if (at === -1) return undefined
  return `holds a lone surrogate (${hex(text.charCodeAt(at))}) at index ${at}, which UTF-8 cannot encode`
}

/**
 * One text field bound for a store: its name (as the message says it),
 * its text (`undefined` is not checked) and its cap (default
 * {@link maxNameLength}).
 *
 * @category models
 * @since 0.2.0
 */
export interface TextField {
  readonly field: string
  readonly text: string | undefined
  readonly max?: number | undefined
}

/**
 * The refusal of the first field `store` cannot hold (see
 * {@link textProblem}), or `undefined` when it can hold them all.
 *
 * @category getters
 * @since 0.2.0
 */
export const refusal = (store: string, fields: ReadonlyArray<TextField>): StoreError | undefined => {
  for (const { field, text, max } of fields) {
    if (text === undefined) continue
    const problem = textProblem(text, max)
    if (problem !== undefined) {
      return new StoreError({ store, category: "VALIDATION", field, message: `${store}: ${field} ${problem}` })
    }
  }
  return undefined
}

/**
 * Checks text bound for `store`: fails with a VALIDATION {@link StoreError}
 * naming the first field it cannot hold (a NUL, a lone surrogate, past its
 * cap), succeeds otherwise.
 *
 * @category constructors
 * @since 0.2.0
 */
export const checkText = (store: string, fields: ReadonlyArray<TextField>): Effect.Effect<void, StoreError> => {
  const refused = refusal(store, fields)
  return refused === undefined ? Effect.void : Effect.fail(refused)
}

const describe = (cause: unknown): string => {
  const text = cause instanceof Error ? (cause.message === "" ? cause.name : cause.message) : String(cause ?? "failed")
  return shorten(text.split("\n", 1)[0] ?? text, 200)
}

/**
 * A TRANSIENT {@link StoreError}: `store` could not `what` (e.g. `"read a
 * token"`) because of `cause`, whose first line (at most 200 characters)
 * the message quotes.
 *
 * @category constructors
 * @since 0.2.0
 */
export const unavailable = (store: string, what: string, cause: unknown): StoreError =>
  new StoreError({ store, category: "TRANSIENT", message: `${store} could not ${what}: ${describe(cause)}`, cause })

/**
 * Runs one operation of `store`'s driver: a failure, and a defect too (some
 * drivers die on a closed connection), becomes a TRANSIENT
 * {@link StoreError} saying what could not be done; a `StoreError` passes
 * through as it is, and an interruption stays an interruption.
 *
 * @category combinators
 * @since 0.2.0
 */
export const guard = <A, E, R>(
  store: string,
  what: string,
  operation: Effect.Effect<A, E, R>
): Effect.Effect<A, StoreError, R> =>
  Effect.catchCause(operation, (cause) => {
    if (Cause.hasInterrupts(cause)) return Effect.failCause(cause as Cause.Cause<never>)
    const error = Cause.squash(cause)
    return Effect.fail(error instanceof StoreError ? error : unavailable(store, what, error))
  })

/**
 * Decodes a row read from `store` with `schema`: a row that does not decode
 * is an EXECUTION {@link StoreError} naming the store, the row (`row`, e.g.
 * `"token 3f2a…"`) and the first failing field, with what was expected.
 *
 * @category constructors
 * @since 0.2.0
 */
export const decodeRow = <S extends Schema.Top & { readonly DecodingServices: never }>(
  store: string,
  row: string,
  schema: S,
  value: unknown
): Effect.Effect<S["Type"], StoreError> => {
  const decoded = Schema.decodeUnknownExit(schema)(value)
  if (Exit.isSuccess(decoded)) return Effect.succeed(decoded.value)
  const issue = Cause.findErrorOption(decoded.cause)
  const first =
    issue._tag === "Some" && Schema.isSchemaError(issue.value)
      ? toValidationError("row", issue.value.issue, value).issues[0]
      : undefined
  const field = first?.path ?? ""
  return Effect.fail(
    new StoreError({
      store,
      category: "EXECUTION",
      field,
      message: `${store}: the stored ${row} does not decode${field === "" ? "" : ` at ${field}`}: ${
        first?.message ?? "it is not a row of this store"
      }`,
      cause: Cause.squash(decoded.cause)
    })
  )
}

/**
 * The action error a store's failure becomes for a call of `action`:
 * VALIDATION (`issues` at the refused field), TRANSIENT or EXECUTION, with
 * the store's message and the store's error as its cause.
 *
 * @category getters
 * @since 0.2.0
 */
export const toActionError = (
  error: StoreError,
  action: string
): ValidationError | TransientFailure | ExecutionFailure => {
  const message = `${action}: ${error.message}`
  switch (error.category) {
    case "VALIDATION":
      return new ValidationError({
        action,
        message,
        issues: [{ path: error.field ?? "", message: error.message }],
        cause: error
      })
    case "EXECUTION":
      return new ExecutionFailure({ action, message, cause: error })
    case "TRANSIENT":
      return new TransientFailure({ action, message, cause: error })
  }
}
