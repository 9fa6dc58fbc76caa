/**
 * A provider's answer, normalised: what a provider function returns (a
 * `ProviderResponse`, read as untrusted — it may come straight off the wire)
 * becomes the `Response` every caller of the language model sees. Text,
 * reasoning, tool calls, citations, usage counts and the finish reason each
 * get one reading; a reply that is not an object, whose content is neither
 * text nor text parts, or whose tool calls are not a list of objects is
 * refused as EXECUTION ("the model's reply is malformed"), and so is a reply
 * larger than the cap on a reply's size (its text, reasoning, refusal and
 * tool-call arguments together), naming the cap. The types are
 * `ModelResponse`'s.
 */
import { ExecutionFailure } from "../../ActionError.ts"
import type { ToolCall } from "../../Prompt.ts"
import type { FinishReason, ProviderResponse, Response } from "../../ModelResponse.ts"
import { citationsOf } from "./citation.ts"

/** The default cap on one reply's size: its text, reasoning, refusal and tool-call arguments, in characters. */
export const defaultMaxReplyCharacters = 1_000_000

/** The failure of a reply past `maxReplyCharacters`, the cap named. */
export const tooLarge = (action: string, maxReplyCharacters: number): ExecutionFailure =>
  new ExecutionFailure({
    action,
    message:
      `${action}: the model's reply is larger than maxReplyCharacters ` +
      `(${maxReplyCharacters.toLocaleString("en-US")} characters of text, reasoning and tool-call arguments)`
  })

/**
 * The finish reasons providers send, read without regard to case, by what they mean. A reply cut at its token
 * limit is `length` under many names: OpenAI's `length`, Anthropic's and Bedrock's `max_tokens`, Gemini's and
 * Cohere's `MAX_TOKENS`, the Responses API's `max_output_tokens`, Mistral's `model_length` and Anthropic's
 * `model_context_window_exceeded` (the context window ran out while writing).
 */
const finishReasons: ReadonlyMap<string, FinishReason> = new Map([
  ["stop", "stop"],
  ["length", "length"],
  ["max_tokens", "length"],
  ["max_output_tokens", "length"],
  ["model_length", "length"],
  ["model_context_window_exceeded", "length"],
  ["tool_calls", "tool_calls"],
  ["content_filter", "content_filter"]
])

/**
 * What a provider's finish reason means: `undefined` when it said none (an absent, `null` or empty reason, or
 * one that is not a string), else its {@link FinishReason} (`"other"` for a reason it does not know).
 */
export const finishReasonOf = (reason: unknown): FinishReason | undefined =>
  typeof reason !== "string" || reason === "" ? undefined : (finishReasons.get(reason.toLowerCase()) ?? "other")

/**
 * A response whose call was made with `maxTokens` and whose output used exactly that many tokens: it was cut
 * at the cap whatever its finish reason says (a router may say `"tool_calls"` for a call it cut), so it
 * finishes `"length"`. Any other response is returned as it is.
 */
export const capped = (response: Response, maxTokens: number | undefined): Response =>
  maxTokens === undefined || response.finishReason === "length" || response.usage.outputTokens !== maxTokens
    ? response
    : { ...response, finishReason: "length" }

const count = (value: number | null | undefined): number =>
  typeof value === "number" && Number.isFinite(value) && value >= 0 ? Math.floor(value) : 0

const isRecord = (u: unknown): u is Readonly<Record<string, unknown>> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

const kindOf = (u: unknown): string =>
  u === null ? "null" : Array.isArray(u) ? "a list" : typeof u === "object" ? "an object" : `a ${typeof u}`

/** The reply's text: a string, nothing (null or absent: ""), or a list of text parts (joined). */
const textOf = (content: unknown): string => {
  if (typeof content === "string") return content
  if (content === undefined || content === null) return ""
  if (Array.isArray(content) && content.every((part) => isRecord(part) && typeof part.text === "string")) {
    return content.map((part) => (part as { readonly text: string }).text).join("")
  }
  return `\u0000${kindOf(content)}`
}

/** The tool calls of a reply, each with an id of its own, or what makes them unreadable. */
const toolCallsOf = (raw: unknown): ReadonlyArray<ToolCall> | string => {
  if (raw === undefined || raw === null) return []
  if (!Array.isArray(raw)) return `its tool_calls is ${kindOf(raw)}, not a list`
  const calls: Array<ToolCall> = []
  for (let index = 0; index < raw.length; index++) {
    const entry: unknown = raw[index]
    if (!isRecord(entry)) return `its tool_calls[${index}] is ${kindOf(entry)}, not a tool call`
    // An id that is not a string is "": a chat turn gives empty and repeated ids fresh ones.
    const id = typeof entry.id === "string" ? entry.id : ""
    const args = entry.arguments
    calls.push({
      id,
      // No usable name: the call is kept under "" and the chat answers it NOT_FOUND.
      name: typeof entry.name === "string" ? entry.name : "",
      arguments: typeof args === "string" ? args : args === undefined || args === null ? "" : JSON.stringify(args)
    })
  }
  return calls
}

/**
 * The {@link Response} a provider's answer reads as, or the EXECUTION failure naming what is malformed in it
 * (or the cap it is larger than: `maxReplyCharacters`).
 */
export const normalise = (
  action: string,
  raw: ProviderResponse,
  maxReplyCharacters: number = defaultMaxReplyCharacters
): Response | ExecutionFailure => {
  const malformed = (what: string) =>
    new ExecutionFailure({ action, message: `${action}: the model's reply is malformed: ${what}` })
  if (!isRecord(raw)) return malformed(`it is ${kindOf(raw)}, not a reply`)
  const text = textOf(raw.text)
  if (text.startsWith("\u0000")) return malformed(`its content is ${text.slice(1)}, not text`)
  const toolCalls = toolCallsOf(raw.toolCalls)
  if (typeof toolCalls === "string") return malformed(toolCalls)
  const reasoning = typeof raw.reasoning === "string" && raw.reasoning !== "" ? raw.reasoning : undefined
  const refusal = typeof raw.refusal === "string" && raw.refusal.length > 0 ? raw.refusal : undefined
  let size = text.length + (reasoning?.length ?? 0) + (refusal?.length ?? 0)
  for (const call of toolCalls) size += call.arguments.length
  if (size > maxReplyCharacters) return tooLarge(action, maxReplyCharacters)
  const usage = isRecord(raw.usage) ? raw.usage : undefined
  const inputTokens = count(usage?.inputTokens as number | undefined)
  const outputTokens = count(usage?.outputTokens as number | undefined)
  const total = usage?.totalTokens
  const parts: { cachedInputTokens?: number; cacheWriteInputTokens?: number; reasoningTokens?: number } = {}
  for (const part of usageParts) {
    const value = usage?.[part]
    if (typeof value === "number" && Number.isFinite(value) && value >= 0) parts[part] = Math.floor(value)
  }
  const finishReason: FinishReason = finishReasonOf(raw.finishReason) ?? (toolCalls.length > 0 ? "tool_calls" : "stop")
  const citations = citationsOf(raw.citations)
  return {
    text,
    toolCalls,
    usage: {
      inputTokens,
      outputTokens,
      totalTokens: typeof total === "number" ? count(total) : inputTokens + outputTokens,
      ...parts
    },
    finishReason,
    ...(typeof raw.model === "string" ? { model: raw.model } : {}),
    ...(refusal === undefined ? {} : { refusal }),
    ...(reasoning === undefined
      ? {}
      : typeof raw.reasoningField === "string" && raw.reasoningField !== ""
        ? { reasoning, reasoningField: raw.reasoningField }
        : { reasoning }),
    ...(citations === undefined ? {} : { citations }),
    ...(isRecord(raw.providerData) ? { providerData: raw.providerData } : {})
  }
}

/** The parts of input and output a usage may name (each a part of its total, never on top of it). */
const usageParts = ["cachedInputTokens", "cacheWriteInputTokens", "reasoningTokens"] as const
