/**
 * A Responses API response read as a provider response: the text of its
 * `output_text` parts (with their `url_citation` annotations as citations)
 * and of its refusals, its `function_call` items as tool calls (the call's
 * `call_id` as the id), its reasoning items' summaries as reasoning — the
 * items themselves (with their encrypted content) kept in the reply's
 * `providerData`, under this endpoint's origin, to be sent back — the usage with its cached input and
 * reasoning tokens, and the finish reason: a response cut short says why
 * (`incomplete_details.reason`: `max_output_tokens` is `"length"`,
 * `content_filter` a content filter); a finished one is read from its tool
 * calls. A `failed` response, or a body with an `error`, is its error's
 * category (a server error or a rate limit TRANSIENT, else EXECUTION). Items
 * of the API's own tools (web search, file search, code interpreter, MCP)
 * are the provider's to run: left out.
 */
import type { ActionError, ModelResponse, Prompt } from "@rolecraft/core"
import * as Effect from "effect/Effect"
import { isRecord } from "../content.ts"
import { errorEvent, malformed } from "../failure.ts"

type Json = Prompt.ProviderFields["fields"][string]

const texts = (value: unknown): string => (typeof value === "string" ? value : "")

/** The usage of a response as the provider's usage: cached input and reasoning tokens as parts. */
export const usageOf = (usage: unknown): ModelResponse.ProviderResponse["usage"] => {
  if (!isRecord(usage)) return undefined
  const input = isRecord(usage.input_tokens_details) ? usage.input_tokens_details : {}
  const output = isRecord(usage.output_tokens_details) ? usage.output_tokens_details : {}
  const count = (value: unknown) => (typeof value === "number" ? value : undefined)
  const cached = count(input.cached_tokens)
  const reasoning = count(output.reasoning_tokens)
  return {
    inputTokens: count(usage.input_tokens),
    outputTokens: count(usage.output_tokens),
    totalTokens: count(usage.total_tokens),
    ...(cached === undefined ? {} : { cachedInputTokens: cached }),
    ...(reasoning === undefined ? {} : { reasoningTokens: reasoning })
  }
}

/** A reasoning item as it is sent back: its id, summary and encrypted content. */
export const reasoningItemOf = (item: Readonly<Record<string, unknown>>): Json => ({
  type: "reasoning",
  ...(typeof item.id === "string" ? { id: item.id } : {}),
  summary: (Array.isArray(item.summary) ? item.summary : []) as Json,
  ...(typeof item.encrypted_content === "string" ? { encrypted_content: item.encrypted_content } : {})
})

/** The summary text of a reasoning item: its summary parts joined by a blank line. */
export const summaryOf = (item: Readonly<Record<string, unknown>>): string =>
  (Array.isArray(item.summary) ? item.summary : [])
    .map((part) => (isRecord(part) ? texts(part.text) : ""))
    .filter((text) => text !== "")
    .join("\n\n")

/** Why a response stopped, when it says: an incomplete one's reason. */
export const finishOf = (response: Readonly<Record<string, unknown>>, calls: number): string => {
  if (response.status === "incomplete") {
    const reason = isRecord(response.incomplete_details) ? response.incomplete_details.reason : undefined
    return typeof reason === "string" && reason !== "" ? reason : "length"
  }
  return calls > 0 ? "tool_calls" : "stop"
}

/**
 * What a reply keeps for this endpoint (`providerData` under its origin): its reasoning items and its response
 * id (for `store: true`).
 */
export const replyData = (
  origin: string,
  reasoning: ReadonlyArray<Json>,
  responseId: unknown
): ModelResponse.ProviderData | undefined => {
  const fields: Record<string, Json> = {}
  if (reasoning.length > 0) fields.reasoning = [...reasoning] as Json
  if (typeof responseId === "string" && responseId !== "") fields.responseId = responseId
  return Object.keys(fields).length === 0 ? undefined : { [origin]: fields }
}

/** The provider response of a Responses API response, or its error. */
export const responseOf = (
  action: string,
  body: unknown,
  origin: string
): Effect.Effect<ModelResponse.ProviderResponse, ActionError.ExecutionFailure | ActionError.TransientFailure> => {
  if (!isRecord(body)) return Effect.fail(malformed(action, "the response is not an object"))
  if (isRecord(body.error)) return Effect.fail(errorEvent(action, body.error))
  if (body.status === "failed") return Effect.fail(errorEvent(action, body.error ?? { message: "the response failed" }))
  if (!Array.isArray(body.output)) return Effect.fail(malformed(action, "no output list"))
  let text = ""
  let refusal = ""
  const reasoningTexts: Array<string> = []
  const reasoning: Array<Json> = []
  const toolCalls: Array<Prompt.ToolCall> = []
  const citations: Array<ModelResponse.Citation> = []
  for (const item of body.output) {
    if (!isRecord(item)) continue
    if (item.type === "message" && Array.isArray(item.content)) {
      for (const part of item.content) {
        if (!isRecord(part)) continue
        if (part.type === "output_text") {
          text += texts(part.text)
          if (Array.isArray(part.annotations)) citations.push(...citationsOf(part.annotations))
        } else if (part.type === "refusal") refusal += texts(part.refusal)
      }
    } else if (item.type === "function_call") {
      toolCalls.push({ id: texts(item.call_id), name: texts(item.name), arguments: texts(item.arguments) })
    } else if (item.type === "reasoning") {
      reasoning.push(reasoningItemOf(item))
      const summary = summaryOf(item)
      if (summary !== "") reasoningTexts.push(summary)
    }
  }
  const providerData = replyData(origin, reasoning, body.id)
  return Effect.succeed({
    text,
    toolCalls,
    finishReason: finishOf(body, toolCalls.length),
    model: typeof body.model === "string" ? body.model : undefined,
    usage: usageOf(body.usage),
    ...(refusal === "" ? {} : { refusal }),
    ...(reasoningTexts.length === 0 ? {} : { reasoning: reasoningTexts.join("\n\n"), reasoningField: "summary" }),
    ...(citations.length === 0 ? {} : { citations }),
    ...(providerData === undefined ? {} : { providerData })
  })
}

/** The `url_citation` annotations of a text part as citations. */
export const citationsOf = (annotations: ReadonlyArray<unknown>): ReadonlyArray<ModelResponse.Citation> =>
  annotations.flatMap((annotation): ReadonlyArray<ModelResponse.Citation> => {
    if (!isRecord(annotation) || annotation.type !== "url_citation" || typeof annotation.url !== "string") return []
    return [
      {
        url: annotation.url,
        ...(typeof annotation.title === "string" ? { title: annotation.title } : {}),
        ...(typeof annotation.start_index === "number" ? { startIndex: annotation.start_index } : {}),
        ...(typeof annotation.end_index === "number" ? { endIndex: annotation.end_index } : {})
      }
    ]
  })
