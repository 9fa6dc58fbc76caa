/**
 * The text of a tool message: how an action's result or failure is written
 * back to a language model. Chat turns answer each tool call with it, and an
 * agent served over MCP (`@rolecraft/mcp`) returns the same text, so a model
 * sees one format wherever it calls an action.
 *
 * - a success is the result itself when it is a string, otherwise its JSON
 *   (`undefined` is `null`; a bigint is its decimal string, a `Date` its ISO
 *   string, a `Map` an object of its entries, a `Set` an array);
 * - a result JSON cannot write (a cycle, or nesting deeper than 1,000
 *   levels) is not a success: it is EXECUTION, naming where the cycle closes;
 * - a failure is `{"error":{"category":"<CATEGORY>","message":"<message>"}}`,
 *   with one of the nine error categories (or `RETRIEVAL` when the action's
 *   knowledge could not be retrieved).
 *
 * @example
 * ```ts
 * import { ToolResult } from "@rolecraft/core"
 * import { Result } from "effect"
 *
 * ToolResult.success("Paris", { action: "capital" }) // Result.succeed("Paris")
 * ToolResult.success({ nights: 3, total: 540n }, { action: "quote" }) // Result.succeed('{"nights":3,"total":"540"}')
 * ToolResult.failure("NOT_FOUND", "no action named book") // '{"error":{"category":"NOT_FOUND","message":"no action named book"}}'
 *
 * // The text a model gets either way:
 * const written = ToolResult.success(new Map([["a", 1]]), { action: "lookup" })
 * const text = Result.isSuccess(written)
 *   ? written.success
 *   : ToolResult.failure(written.failure.category, written.failure.message)
 * ```
 *
 * @since 0.1.0
 */
import * as Result from "effect/Result"
import { ExecutionFailure } from "./ActionError.ts"
import { isPlainObject, write } from "./internal/json.ts"

/**
 * Options of {@link success}.
 *
 * - `action`: the name of the action that returned the result; it names the
 *   `ExecutionFailure` of a result that cannot be written.
 *
 * @category models
 * @since 0.2.0
 */
export interface SuccessOptions {
  readonly action: string
}

/**
 * The text of a successful result: a string as is, `undefined` as `"null"`,
 * anything else as JSON — a bigint as its decimal string, a `Date` as its ISO
 * string (any `toJSON` is honoured), a `Map` as an object of its entries (a
 * key as its string, or its JSON when it is an object), a `Set` as an array.
 *
 * Fails with `ExecutionFailure` (EXECUTION) when the result has no JSON text:
 * a cycle (the message names the path where it closes, such as `$.self`), or
 * nesting deeper than 1,000 objects and arrays. Its message reads
 * `<action>: the result cannot be serialised: the value refers to itself at $.self`.
 *
 * @example
 * ```ts
 * import { ToolResult } from "@rolecraft/core"
 *
 * ToolResult.success({ at: new Date(0), tags: new Set(["a"]) }, { action: "find" })
 * // Result.succeed('{"at":"1970-01-01T00:00:00.000Z","tags":["a"]}')
 * ```
 *
 * @category constructors
 * @since 0.2.0
 */
export const success = (value: unknown, options: SuccessOptions): Result.Result<string, ExecutionFailure> => {
  if (typeof value === "string") return Result.succeed(value)
  if (value === undefined) return Result.succeed("null")
  const written = write(value)
  return Result.isSuccess(written)
    ? (written as Result.Result<string, never>) // a success carries no failure: the same value, not a copy
    : Result.fail(
        new ExecutionFailure({
          action: options.action,
          message: `${options.action}: the result cannot be serialised: ${written.failure.message}`
        })
      )
}

/**
 * The text of a successful result, as {@link success} writes it; a result
 * that has no JSON text (a cycle, nesting deeper than 1,000 levels) is its
 * `String` form instead of a failure.
 *
 * @deprecated Use {@link success}, which fails with EXECUTION for a result it cannot write.
 * @category constructors
 * @since 0.1.0
 */
export const text = (value: unknown): string => {
  const written = success(value, { action: "" })
  return Result.isSuccess(written) ? written.success : String(value)
}

/**
 * The structured form of a successful result, for protocols that carry one
 * next to the text (MCP's `structuredContent`): the result itself when it is
 * a plain JSON object (not an array, a `Date`, a `Map` or a class instance),
 * else `undefined`. `Mcp.serve` sends the JSON of its {@link success} text,
 * so the structured form and the text always agree.
 *
 * @category constructors
 * @since 0.1.0
 */
export const structured = (value: unknown): Record<string, unknown> | undefined =>
  isPlainObject(value) ? value : undefined

/**
 * The text of a failed call: `{"error":{"category","message"}}`.
 *
 * @category constructors
 * @since 0.1.0
 */
export const failure = (category: string, message: string): string => JSON.stringify({ error: { category, message } })
