/**
 * The text of a tool message: how an action's result or failure is written
 * back to a language model. Chat turns answer each tool call with it, and an
 * agent served over MCP (`@rolecraft/mcp`) returns the same text, so a model
 * sees one format wherever it calls an action.
 *
 * - a success is the result itself when it is a string, otherwise its JSON
 *   (`undefined` is `null`);
 * - a failure is `{"error":{"category":"<CATEGORY>","message":"<message>"}}`,
 *   with one of the nine error categories (or `RETRIEVAL` when the action's
 *   knowledge could not be retrieved).
 *
 * @example
 * ```ts
 * import { ToolResult } from "@rolecraft/core"
 *
 * ToolResult.text("Paris") // "Paris"
 * ToolResult.text({ nights: 3 }) // '{"nights":3}'
 * ToolResult.failure("NOT_FOUND", "no action named book") // '{"error":{"category":"NOT_FOUND","message":"no action named book"}}'
 * ```
 *
 * @since 0.1.0
 */
import * as Result from "effect/Result"
import { isPlainObject } from "./internal/json.ts"

/**
 * The text of a successful result: a string as is, anything else as JSON;
 * `undefined` is `"null"`, and a value JSON cannot write (a `bigint`, a
 * cycle) is its `String` form.
 *
 * @category constructors
 * @since 0.1.0
 */
export const text = (value: unknown): string => {
  if (typeof value === "string") return value
  if (value === undefined) return "null"
  const json = Result.try(() => JSON.stringify(value))
  return Result.isSuccess(json) && typeof json.success === "string" ? json.success : String(value)
}

/**
 * The structured form of a successful result, for protocols that carry one
 * next to the text (MCP's `structuredContent`): the result itself when it is
 * a plain JSON object (not an array, a `Date`, a `Map` or a class instance),
 * else `undefined`.
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
