/**
 * effect/ai's answer parts as Rolecraft's: a whole response as a provider
 * response, a stream's parts as provider chunks for the core stream reader.
 * Every part effect/ai's providers emit is read: text; reasoning (as
 * reasoning, never text; a redacted block's empty text carries nothing); tool
 * calls — their start and argument deltas, or the whole call at once —
 * except the calls the provider ran itself (built-in tools: not Rolecraft's
 * to run, nor their results); sources, as citations (a URL with its title, a
 * document by its title); the model id; the finish reason with its usage;
 * and a stream's error parts, which end the call (see `internal/error.ts`). Files and
 * approval requests of provider-run tools carry nothing Rolecraft's answer
 * has a place for, and are left out.
 */
import type { ActionError, ModelResponse } from "@rolecraft/core"
import type { LanguageModel as AiLanguageModel, Response } from "effect/ai"
import * as Result from "effect/Result"

const finishReasons: Readonly<Record<Response.FinishReason, string | undefined>> = {
  stop: "stop",
  length: "length",
  "tool-calls": "tool_calls",
  "content-filter": "content_filter",
  error: "other",
  pause: "other",
  other: "other",
  // No reason given: Rolecraft infers it from the tool calls.
  unknown: undefined
}

/** The name reasoning read from effect/ai is kept under (effect/ai's part type). */
export const reasoningField = "reasoning"

const sum = (...counts: ReadonlyArray<number | undefined>): number | undefined =>
  counts.every((count) => count === undefined) ? undefined : counts.reduce<number>((a, b) => a + (b ?? 0), 0)

const argumentsOf = (params: unknown): string => (typeof params === "string" ? params : JSON.stringify(params ?? {}))

const usageOf = (usage: Response.Usage): ModelResponse.ProviderResponse["usage"] => ({
  inputTokens:
    usage.inputTokens.total ??
    sum(usage.inputTokens.uncached, usage.inputTokens.cacheRead, usage.inputTokens.cacheWrite),
  outputTokens: usage.outputTokens.total ?? sum(usage.outputTokens.text, usage.outputTokens.reasoning),
  // effect/ai's parts are parts of its totals, as ours are.
  cachedInputTokens: usage.inputTokens.cacheRead,
  cacheWriteInputTokens: usage.inputTokens.cacheWrite,
  reasoningTokens: usage.outputTokens.reasoning
})

/** A source part as a citation: a web page by its URL and title, a document by its title. */
const citationOf = (part: Response.DocumentSourcePart | Response.UrlSourcePart): ModelResponse.Citation =>
  part.sourceType === "url" ? { url: part.url.toString(), title: part.title } : { title: part.title }

/** A whole effect/ai response as a provider response. */
export const responseOf = (
  response: AiLanguageModel.GenerateTextResponse<any, any>
): ModelResponse.ProviderResponse => {
  let model: string | undefined
  const citations: Array<ModelResponse.Citation> = []
  for (const part of response.content) {
    if (part.type === "source") citations.push(citationOf(part))
    else if (part.type === "response-metadata") model = part.modelId
  }
  const reasoning = response.reasoningText
  return {
    text: response.text,
    // A call the provider ran itself (a built-in tool) is not Rolecraft's to run.
    toolCalls: response.toolCalls
      .filter((part) => part.providerExecuted !== true)
      .map((part) => ({ id: part.id, name: part.name, arguments: argumentsOf(part.params) })),
    usage: usageOf(response.usage),
    finishReason: finishReasons[response.finishReason],
    model,
    ...(reasoning === undefined || reasoning === "" ? {} : { reasoning, reasoningField }),
    ...(citations.length === 0 ? {} : { citations })
  }
}

/**
 * A reader of one effect/ai stream: `read` turns a batch of parts into the provider chunks they add, or the
 * error part that ends the stream. Tool calls get an index each, in the order they begin.
 */
export const chunker = (fail: (error: unknown) => ActionError.ActionError) => {
  const indexes = new Map<string, number>()
  const skipped = new Set<string>()
  const indexOf = (id: string) => {
    const known = indexes.get(id)
    if (known !== undefined) return known
    const index = indexes.size
    indexes.set(id, index)
    return index
  }
  const chunkOf = (part: Response.StreamPart<any, any>): ModelResponse.ProviderChunk | undefined => {
    switch (part.type) {
      case "text-delta":
        return { text: part.delta }
      case "reasoning-delta":
        return part.delta === "" ? undefined : { reasoning: part.delta, reasoningField }
      case "tool-params-start":
        if (part.providerExecuted === true) {
          skipped.add(part.id)
          return undefined
        }
        return { toolCalls: [{ index: indexOf(part.id), id: part.id, name: part.name }] }
      case "tool-params-delta":
        return skipped.has(part.id) || !indexes.has(part.id)
          ? undefined
          : { toolCalls: [{ index: indexOf(part.id), arguments: part.delta }] }
      case "tool-call":
        if (part.providerExecuted === true || indexes.has(part.id)) return undefined
        return {
          toolCalls: [{ index: indexOf(part.id), id: part.id, name: part.name, arguments: argumentsOf(part.params) }]
        }
      case "source":
        return { citations: [citationOf(part)] }
      case "response-metadata":
        return part.modelId === undefined ? undefined : { model: part.modelId }
      case "finish":
        return {
          finishReason: finishReasons[part.reason] ?? (indexes.size > 0 ? "tool_calls" : "stop"),
          usage: usageOf(part.usage)
        }
      default:
        return undefined
    }
  }
  return (
    batch: ReadonlyArray<Response.StreamPart<any, any>>
  ): Result.Result<ReadonlyArray<ModelResponse.ProviderChunk>, ActionError.ActionError> => {
    const chunks: Array<ModelResponse.ProviderChunk> = []
    for (const part of batch) {
      if (part.type === "error") return Result.fail(fail(part.error))
      const chunk = chunkOf(part)
      if (chunk !== undefined) chunks.push(chunk)
    }
    return Result.succeed(chunks)
  }
}
