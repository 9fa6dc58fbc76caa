/**
 * A Messages API reply read as a provider response: its `text` blocks are
 * the text, its `thinking` blocks the reasoning, its `tool_use` blocks the
 * tool calls (the `input` object as the arguments' JSON), its
 * `thinking` and `redacted_thinking` blocks kept verbatim as
 * `providerData.anthropic.thinking` (to be sent back with their
 * signatures), its text citations as citations; the stop reason in the core's
 * words (`end_turn` and `stop_sequence` stop, `tool_use` calls tools,
 * `max_tokens` and `model_context_window_exceeded` are the length cut,
 * `refusal` is a refusal with the API's explanation), and the usage in the
 * one convention: input counts every token read, cache reads
 * (`cache_read_input_tokens`) and cache writes (`cache_creation_input_tokens`)
 * included, each also reported as its part; reasoning
 * (`output_tokens_details.thinking_tokens`) is a part of the output. Server
 * tool blocks (web search, code execution) carry no text or calls of ours.
 */
import type { ActionError, ModelResponse, Prompt } from "@rolecraft/core"
import { malformed } from "./failure.ts"
import type { Block } from "./request.ts"

const isRecord = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const count = (value: unknown): number | undefined =>
  typeof value === "number" && Number.isInteger(value) && value >= 0 ? value : undefined

/** The field a reply's reasoning comes in: Anthropic's `thinking` blocks. */
export const reasoningField = "thinking"

/** A Messages API usage object in the one convention (see the module's header); `undefined` for none. */
export const usageOf = (usage: unknown): ModelResponse.ProviderUsage | undefined => {
  if (!isRecord(usage)) return undefined
  const input = count(usage.input_tokens) ?? 0
  const read = count(usage.cache_read_input_tokens)
  const written = count(usage.cache_creation_input_tokens)
  const output = count(usage.output_tokens) ?? 0
  const details = usage.output_tokens_details
  const thinking = isRecord(details) ? count(details.thinking_tokens) : undefined
  const inputTokens = input + (read ?? 0) + (written ?? 0)
  return {
    inputTokens,
    outputTokens: output,
    totalTokens: inputTokens + output,
    ...(read === undefined ? {} : { cachedInputTokens: read }),
    ...(written === undefined ? {} : { cacheWriteInputTokens: written }),
    ...(thinking === undefined ? {} : { reasoningTokens: thinking })
  }
}

/** Two usage objects of one reply (a stream's start and its delta): the fields the later one sends win. */
export const mergeUsage = (earlier: unknown, later: unknown): unknown => {
  if (!isRecord(later)) return earlier
  if (!isRecord(earlier)) return later
  const merged: Record<string, unknown> = { ...earlier }
  for (const [key, value] of Object.entries(later)) if (value !== null && value !== undefined) merged[key] = value
  return merged
}

/** Two usages of a turn continued after `pause_turn`: each call's counts, added. */
export const addUsage = (
  a: ModelResponse.ProviderUsage | undefined,
  b: ModelResponse.ProviderUsage | undefined
): ModelResponse.ProviderUsage | undefined => {
  if (a === undefined) return b
  if (b === undefined) return a
  const sum: Record<string, number> = {}
  for (const key of [
    "inputTokens",
    "outputTokens",
    "totalTokens",
    "cachedInputTokens",
    "cacheWriteInputTokens",
    "reasoningTokens"
  ] as const) {
    const x = a[key]
    const y = b[key]
    if (typeof x === "number" || typeof y === "number") sum[key] = (x ?? 0) + (y ?? 0)
  }
  return sum
}

/** A stop reason in the core's words (see the module's header); `undefined` for none. */
export const finishReasonOf = (stopReason: unknown): string | undefined => {
  switch (stopReason) {
    case "end_turn":
    case "stop_sequence":
      return "stop"
    case "tool_use":
      return "tool_calls"
    case "max_tokens":
    case "model_context_window_exceeded":
      return "length"
    case "refusal":
      return "content_filter"
    case null:
    case undefined:
      return undefined
    default:
      return typeof stopReason === "string" ? stopReason : undefined
  }
}

/** The refusal of a reply that stopped with `refusal`: the API's explanation, else a plain one. */
export const refusalOf = (stopReason: unknown, stopDetails: unknown): string | undefined => {
  if (stopReason !== "refusal") return undefined
  const explanation = isRecord(stopDetails) ? stopDetails.explanation : undefined
  return typeof explanation === "string" && explanation !== "" ? explanation : "The model declined to answer."
}

/** The provider data of a reply's signed thinking blocks: `{ anthropic: { thinking } }`, or none. */
export const providerDataOf = (thinking: ReadonlyArray<Block>): ModelResponse.ProviderData | undefined =>
  thinking.length === 0 ? undefined : { anthropic: { thinking } }

/** Whether a block is one that must be sent back as it came: `thinking` or `redacted_thinking`. */
export const isThinkingBlock = (block: Block): boolean =>
  block.type === "thinking" || block.type === "redacted_thinking"

/** The citations a text block carries, as core citations (a cited URL or document title, and the text cited). */
export const citationsOf = (citations: unknown): ReadonlyArray<ModelResponse.Citation> => {
  if (!Array.isArray(citations)) return []
  const out: Array<ModelResponse.Citation> = []
  for (const citation of citations) {
    if (!isRecord(citation)) continue
    const url = typeof citation.url === "string" ? citation.url : undefined
    const title =
      typeof citation.title === "string"
        ? citation.title
        : typeof citation.document_title === "string"
          ? citation.document_title
          : undefined
    if (url === undefined && title === undefined) continue
    out.push({
      ...(url === undefined ? {} : { url }),
      ...(title === undefined ? {} : { title }),
      ...(typeof citation.cited_text === "string" ? { content: citation.cited_text } : {})
    })
  }
  return out
}

/** What the blocks of one reply (or of one call of a continued turn) say. */
export interface Read {
  readonly text: string
  readonly reasoning: string
  readonly toolCalls: ReadonlyArray<Prompt.ToolCall>
  readonly thinking: ReadonlyArray<Block>
  readonly citations: ReadonlyArray<ModelResponse.Citation>
}

/** The text, reasoning, tool calls, signed thinking blocks and citations of a reply's content blocks. */
export const readBlocks = (action: string, content: unknown): Read | ActionError.ExecutionFailure => {
  if (!Array.isArray(content)) return malformed(action, "content is not a list of blocks")
  let text = ""
  let reasoning = ""
  const toolCalls: Array<Prompt.ToolCall> = []
  const thinking: Array<Block> = []
  const citations: Array<ModelResponse.Citation> = []
  for (let i = 0; i < content.length; i++) {
    const block: unknown = content[i]
    if (!isRecord(block)) return malformed(action, `content[${i}] is not an object`)
    switch (block.type) {
      case "text":
        if (typeof block.text !== "string") return malformed(action, `content[${i}].text is not a string`)
        text += block.text
        citations.push(...citationsOf(block.citations))
        break
      case "thinking":
        if (typeof block.thinking !== "string") return malformed(action, `content[${i}].thinking is not a string`)
        reasoning += block.thinking
        thinking.push(block)
        break
      case "redacted_thinking":
        thinking.push(block)
        break
      case "tool_use":
        if (typeof block.id !== "string" || typeof block.name !== "string") {
          return malformed(action, `content[${i}] is a tool_use block without an id and a name`)
        }
        toolCalls.push({ id: block.id, name: block.name, arguments: JSON.stringify(block.input ?? {}) })
        break
      default:
        break
    }
  }
  return { text, reasoning, toolCalls, thinking, citations }
}

/** The provider response of the reads of a reply (one read, or one per call of a continued turn). */
export const responseOf = (
  reads: ReadonlyArray<Read>,
  ending: {
    readonly stopReason: unknown
    readonly stopDetails: unknown
    readonly model: unknown
    readonly usage: ModelResponse.ProviderUsage | undefined
  }
): ModelResponse.ProviderResponse => {
  const text = reads.map((read) => read.text).join("")
  const reasoning = reads.map((read) => read.reasoning).join("")
  const thinking = reads.flatMap((read) => read.thinking)
  const citations = reads.flatMap((read) => read.citations)
  const providerData = providerDataOf(thinking)
  const refusal = refusalOf(ending.stopReason, ending.stopDetails)
  return {
    text,
    toolCalls: reads.flatMap((read) => read.toolCalls),
    finishReason: finishReasonOf(ending.stopReason),
    ...(typeof ending.model === "string" ? { model: ending.model } : {}),
    ...(reasoning === "" ? {} : { reasoning, reasoningField }),
    ...(refusal === undefined ? {} : { refusal }),
    ...(citations.length === 0 ? {} : { citations }),
    ...(providerData === undefined ? {} : { providerData }),
    ...(ending.usage === undefined ? {} : { usage: ending.usage })
  }
}
