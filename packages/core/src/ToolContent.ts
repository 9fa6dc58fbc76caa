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
 * import { ToolContent } from "@rolecraft/core"
 * import { Result } from "effect"
 *
 * ToolContent.success("Paris", { action: "capital" }) // Result.succeed("Paris")
 * ToolContent.success({ nights: 3, total: 540n }, { action: "quote" }) // Result.succeed('{"nights":3,"total":"540"}')
 * ToolContent.failure("NOT_FOUND", "no action named book") // '{"error":{"category":"NOT_FOUND","message":"no action named book"}}'
 *
 * // The text a model gets either way:
 * const written = ToolContent.success(new Map([["a", 1]]), { action: "lookup" })
 * const text = Result.isSuccess(written)
 *   ? written.success
 *   : ToolContent.failure(written.failure.category, written.failure.message)
 * ```
 *
 * @since 0.3.0
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
 * @since 0.3.0
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
 * import { ToolContent } from "@rolecraft/core"
 *
 * ToolContent.success({ at: new Date(0), tags: new Set(["a"]) }, { action: "find" })
 * // Result.succeed('{"at":"1970-01-01T00:00:00.000Z","tags":["a"]}')
 * ```
 *
 * @category constructors
 * @since 0.3.0
 */
export const success = (value: unknown, options: SuccessOptions): Result.Result<string, ExecutionFailure> => {
  if (typeof value === "string") return Result.succeed(value)
  if (value === undefined) return Result.succeed("null")
  if (isContent(value)) return Result.succeed(contentText(value))
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
 * The structured form of a successful result, for protocols that carry one
 * next to the text (MCP's `structuredContent`): the result itself when it is
 * a plain JSON object (not an array, a `Date`, a `Map` or a class instance),
 * else `undefined`. `Mcp.serve` sends the JSON of its {@link success} text,
 * so the structured form and the text always agree.
 *
 * @category constructors
 * @since 0.3.0
 */
export const structured = (value: unknown): Record<string, unknown> | undefined =>
  isPlainObject(value) && !isContent(value) ? value : undefined

/**
 * The text of a failed call: `{"error":{"category","message"}}`.
 *
 * @category constructors
 * @since 0.3.0
 */
export const failure = (category: string, message: string): string => JSON.stringify({ error: { category, message } })

const ContentTypeId: unique symbol = Symbol.for("@rolecraft/core/ToolContent/Content")

/**
 * One MCP content block, as an action returns it inside {@link Content}:
 *
 * - `text`: `{ type: "text", text }`;
 * - `image`, `audio`: `{ type, data, mimeType }`, `data` base64;
 * - `resource`: an embedded resource, `{ type: "resource", resource: { uri,
 *   mimeType?, text } }` or with `blob` (base64) instead of `text`;
 * - `resource_link`: a pointer to a resource the client can read,
 *   `{ type: "resource_link", uri, name, mimeType?, description? }`.
 *
 * @category models
 * @since 0.3.0
 */
export type Block =
  | { readonly type: "text"; readonly text: string }
  | { readonly type: "image" | "audio"; readonly data: string; readonly mimeType: string }
  | {
      readonly type: "resource"
      readonly resource:
        | { readonly uri: string; readonly mimeType?: string | undefined; readonly text: string }
        | { readonly uri: string; readonly mimeType?: string | undefined; readonly blob: string }
    }
  | {
      readonly type: "resource_link"
      readonly uri: string
      readonly name: string
      readonly mimeType?: string | undefined
      readonly description?: string | undefined
    }

/**
 * A result made of content blocks: what an action returns to answer with an
 * image, audio, an embedded resource or a resource link (or several blocks
 * at once). `Mcp.serve` sends the blocks as they are; a chat turn sends the
 * model their text ({@link success}: a text block as is, an embedded text
 * resource as its text under a `[resource <uri>]` line, anything else as a
 * one-line description such as `[image image/png, 68 bytes]`). Make one with
 * {@link content}, {@link image}, {@link audio}, {@link resource} or
 * {@link resourceLink}.
 *
 * @category models
 * @since 0.3.0
 */
export interface Content {
  readonly [ContentTypeId]: typeof ContentTypeId
  readonly blocks: ReadonlyArray<Block>
}

/**
 * Whether a value is a {@link Content} result.
 *
 * @category guards
 * @since 0.3.0
 */
export const isContent = (u: unknown): u is Content => typeof u === "object" && u !== null && ContentTypeId in u

const base64 = (data: string | Uint8Array): string =>
  typeof data === "string" ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString("base64")

/**
 * A result of several blocks, in order: each part a string (a text block), a
 * {@link Block}, or another {@link Content} (its blocks).
 *
 * @example
 * ```ts
 * import { ToolContent } from "@rolecraft/core"
 *
 * const png = new Uint8Array([137, 80, 78, 71])
 * ToolContent.content("The chart:", ToolContent.image(png, "image/png"))
 * ```
 *
 * @category constructors
 * @since 0.3.0
 */
export const content = (...parts: ReadonlyArray<string | Block | Content>): Content => ({
  [ContentTypeId]: ContentTypeId,
  blocks: parts.flatMap(
    (part): ReadonlyArray<Block> =>
      typeof part === "string" ? [{ type: "text", text: part }] : isContent(part) ? part.blocks : [part]
  )
})

/**
 * An image block: `data` as bytes or base64 text, and its MIME type
 * (`"image/png"`).
 *
 * @category constructors
 * @since 0.3.0
 */
export const image = (data: string | Uint8Array, mimeType: string): Content =>
  content({ type: "image", data: base64(data), mimeType })

/**
 * An audio block: `data` as bytes or base64 text, and its MIME type
 * (`"audio/wav"`).
 *
 * @category constructors
 * @since 0.3.0
 */
export const audio = (data: string | Uint8Array, mimeType: string): Content =>
  content({ type: "audio", data: base64(data), mimeType })

/**
 * An embedded resource: its `uri`, optional `mimeType`, and either `text` or
 * `blob` (bytes or base64 text).
 *
 * @category constructors
 * @since 0.3.0
 */
export const resource = (
  options:
    | { readonly uri: string; readonly mimeType?: string | undefined; readonly text: string }
    | { readonly uri: string; readonly mimeType?: string | undefined; readonly blob: string | Uint8Array }
): Content => {
  const mime = options.mimeType === undefined ? {} : { mimeType: options.mimeType }
  return content({
    type: "resource",
    resource:
      "text" in options
        ? { uri: options.uri, ...mime, text: options.text }
        : { uri: options.uri, ...mime, blob: base64(options.blob) }
  })
}

/**
 * A link to a resource the client can read itself (`resources/read`): its
 * `uri`, `name`, and optional `mimeType` and `description`.
 *
 * @category constructors
 * @since 0.3.0
 */
export const resourceLink = (options: {
  readonly uri: string
  readonly name: string
  readonly mimeType?: string | undefined
  readonly description?: string | undefined
}): Content => content({ type: "resource_link", ...options })

const sizeOf = (data: string): number =>
  Math.floor((data.length * 3) / 4) - (data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0)

/** The text a model is sent for one block. */
const textOf = (block: Block): string => {
  switch (block.type) {
    case "text":
      return block.text
    case "image":
    case "audio":
      return `[${block.type} ${block.mimeType}, ${sizeOf(block.data)} bytes]`
    case "resource":
      return "text" in block.resource
        ? `[resource ${block.resource.uri}]\n${block.resource.text}`
        : `[resource ${block.resource.uri}${block.resource.mimeType === undefined ? "" : ` ${block.resource.mimeType}`}, ${sizeOf(block.resource.blob)} bytes]`
    case "resource_link":
      return `[resource link ${block.name}: ${block.uri}]`
  }
}

/** The text of a {@link Content} result: each block's text, one per line. */
const contentText = (value: Content): string => value.blocks.map(textOf).join("\n")
