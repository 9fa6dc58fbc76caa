/**
 * The value of an MCP tool result: valid
 * `structuredContent` when present, else the text parts joined, else the
 * list of parts converted block by block — images, audio and binary
 * resources as placeholders (base64 is never inlined), embedded text
 * resources as their text prefixed with the URI, resource links as text
 * references, unknown blocks as placeholders. One unsupported block never
 * discards the others, and the total size is bounded.
 *
 * @since 0.1.0
 */
import * as Result from "effect/Result"
import * as SchemaParser from "effect/SchemaParser"
import { fromJsonSchema } from "../../schema/fromJsonSchema.ts"
import { cut } from "../../text.ts"
import type { CallToolResult, ContentBlock } from "../../../McpClient.ts"
import * as Predicate from "effect/Predicate"

/**
 * One converted content block. `text` is always there: the block's text, or
 * a placeholder such as `[image image/png, 300 KB]`; the other fields keep
 * what describes the block (never its base64 data).
 *
 * - `text`: `{ type: "text", text }`
 * - `image`, `audio`: `{ type, mimeType, bytes, text: "[image image/png, 300 KB]" }`
 * - `resource` with text: `{ type, uri, mimeType?, text: "<uri>\n<text>" }`
 * - `resource` with a blob: `{ type, uri, mimeType?, bytes, text: "[resource <uri> <mime>, 2 KB]" }`
 * - `resource_link`: `{ type, uri, name, mimeType?, text: "[resource link <name> <uri> <mime>]" }`
 * - anything else: `{ type, text: "[unsupported content <type>]" }`
 *
 * @since 0.1.0
 */
export interface Part {
  readonly type: string
  readonly text: string
  readonly mimeType?: string | undefined
  readonly uri?: string | undefined
  readonly name?: string | undefined
  readonly bytes?: number | undefined
}

/**
 * Options of {@link toValue}.
 *
 * - `outputSchema`: the tool's output schema; `structuredContent` is used
 *   only when it validates against it (or when there is none).
 * - `maxLength`: the bound on the characters of text produced from
 *   `content` (joined text, or the parts' texts together), default 100,000;
 *   what passes it is cut and a marker says how much was left out.
 *
 * @since 0.1.0
 */
export interface Options {
  readonly outputSchema?: Readonly<Record<string, unknown>> | undefined
  readonly maxLength?: number | undefined
}

const defaultMaxLength = 100_000

/**
 * The result's value, as an mcpTool action returns it:
 *
 * 1. `structuredContent`, when it is an object that satisfies the tool's
 *    `outputSchema` (or the tool declares none);
 * 2. else, when every block is text, their texts joined with `"\n"`; `null`
 *    when there is no content at all;
 * 3. else the list of {@link Part}s, one per block, in order.
 *
 * Pure; never throws. The bound (`maxLength`) applies to 2 and 3.
 *
 * For example:
 * ```
 * toValue({ content: [{ type: "text", text: "Echo: hi" }] }) // "Echo: hi"
 * toValue({ content: [{ type: "image", data: "iVBORw0…", mimeType: "image/png" }] })
 * // [{ type: "image", mimeType: "image/png", bytes: 307200, text: "[image image/png, 300 KB]" }]
 * ```
 *
 * @since 0.1.0
 */
export const toValue = (result: CallToolResult, options?: Options): unknown => {
  const structured = result.structuredContent
  if (Predicate.isObject(structured) && satisfies(structured, options?.outputSchema)) return structured
  const maxLength = options?.maxLength ?? defaultMaxLength
  const content = result.content
  if (content.length === 0) return null
  if (content.every(isTextBlock)) return bound(content.map((block) => block.text).join("\n"), maxLength)
  return boundParts(content.map(toPart), maxLength)
}

/**
 * Whether a result that does not say `isError` reports a failure of the
 * protocol in its text: its first block is text that starts with an MCP
 * JSON-RPC error (`MCP error -32601: …`, the form the MCP SDK gives every
 * protocol error), alone or after a short label (`Elicitation error: MCP
 * error -32601: …`, as a tool that caught a failed request of its own
 * writes it). Such a result is not a success. Text that only mentions an
 * error further in is left alone.
 *
 * @since 0.2.0
 */
export const reportsProtocolFailure = (result: CallToolResult): boolean => {
  if (Predicate.isObject(result.structuredContent)) return false
  const [first] = result.content
  return first !== undefined && isTextBlock(first) && protocolFailure.test(first.text)
}

// "MCP error <code>" with a code in JSON-RPC's reserved range (-32768 to -32000), at the start or after a
// label of at most three words ending in "error:", "failed:" or "failure:".
const protocolFailure = /^\s*(?:(?:[\w./-]+\s+){0,2}(?:error|failed|failure):\s*)?MCP error -32[0-7]\d{2}\b/i

/**
 * The text of a result for a message: text blocks joined with `"\n"`, other
 * blocks as their {@link Part} text; at most `maxLength` characters (default
 * 2,000). Used for the excerpt of a tool's error.
 *
 * @since 0.1.0
 */
export const toText = (result: CallToolResult, maxLength = 2_000): string =>
  bound(result.content.map((block) => toPart(block).text).join("\n"), maxLength)

/**
 * One content block as a {@link Part} (see there for each type).
 *
 * @since 0.1.0
 */
export const toPart = (block: ContentBlock): Part => {
  switch (block.type) {
    case "text":
      return { type: "text", text: typeof block.text === "string" ? block.text : "" }
    case "image":
    case "audio": {
      const mimeType = stringField(block.mimeType) ?? "application/octet-stream"
      const bytes = base64Bytes(block.data)
      return { type: block.type, mimeType, bytes, text: `[${block.type} ${mimeType}, ${formatSize(bytes)}]` }
    }
    case "resource":
      return resourcePart(block.resource)
    case "resource_link": {
      const uri = stringField(block.uri) ?? ""
      const name = stringField(block.name) ?? uri
      const mimeType = stringField(block.mimeType)
      const shown = ["resource link", name, uri, ...(mimeType === undefined ? [] : [mimeType])].join(" ")
      return { type: "resource_link", uri, name, ...(mimeType === undefined ? {} : { mimeType }), text: `[${shown}]` }
    }
    default:
      return { type: block.type, text: `[unsupported content ${block.type}]` }
  }
}

const resourcePart = (resource: unknown): Part => {
  if (!Predicate.isObject(resource)) return { type: "resource", text: "[resource without contents]" }
  const uri = stringField(resource.uri) ?? ""
  const mimeType = stringField(resource.mimeType)
  const mime = mimeType === undefined ? {} : { mimeType }
  if (typeof resource.text === "string") {
    return { type: "resource", uri, ...mime, text: uri === "" ? resource.text : `${uri}\n${resource.text}` }
  }
  const bytes = base64Bytes(resource.blob)
  const shown = [uri, mimeType ?? "application/octet-stream"].filter((part) => part !== "").join(" ")
  return { type: "resource", uri, ...mime, bytes, text: `[resource ${shown}, ${formatSize(bytes)}]` }
}

const isTextBlock = (block: ContentBlock): block is ContentBlock & { readonly text: string } =>
  block.type === "text" && typeof block.text === "string"

const stringField = (u: unknown): string | undefined => (typeof u === "string" ? u : undefined)

/** The decoded size of a base64 text, without decoding it. */
const base64Bytes = (data: unknown): number => {
  if (typeof data !== "string") return 0
  const length = data.replace(/\s/g, "").length
  const padding = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0
  return Math.max(0, Math.floor((length * 3) / 4) - padding)
}

/**
 * A size as people read it: `512 B`, `300 KB`, `1.5 MB` (1 KB = 1,024 bytes).
 *
 * @since 0.1.0
 */
export const formatSize = (bytes: number): string => {
  if (bytes < 1024) return `${bytes} B`
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KB`
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`
}

const bound = (text: string, maxLength: number): string =>
  text.length <= maxLength ? text : `${cut(text, maxLength)}\n[truncated: ${text.length - maxLength} more characters]`

const boundParts = (parts: ReadonlyArray<Part>, maxLength: number): ReadonlyArray<Part> => {
  const out: Array<Part> = []
  let left = maxLength
  for (const [index, part] of parts.entries()) {
    if (left <= 0) {
      out.push({ type: "text", text: `[truncated: ${parts.length - index} more parts]` })
      break
    }
    out.push(part.text.length <= left ? part : { ...part, text: bound(part.text, left) })
    left -= part.text.length
  }
  return out
}

const guards = new WeakMap<object, (u: unknown) => boolean>()

const satisfies = (value: Readonly<Record<string, unknown>>, outputSchema: Options["outputSchema"]): boolean => {
  if (outputSchema === undefined) return true
  let guard = guards.get(outputSchema)
  if (guard === undefined) {
    const is = SchemaParser.is(fromJsonSchema(outputSchema))
    guard = (u) => {
      const checked = Result.try(() => is(u))
      return Result.isSuccess(checked) && checked.success
    }
    guards.set(outputSchema, guard)
  }
  return guard(value)
}
