/**
 * A streamed chat completion chunk read as a provider chunk: the first
 * choice's `delta` — its content (a string, or a list of parts whose
 * thinking parts are reasoning), its reasoning (`reasoning_content` or
 * `reasoning`), refusal, tool-call fragments (with or without `index`) and
 * `url_citation` annotations — its `finish_reason`, the model, the usage (at
 * the top level, or inside the choice as Moonshot sends it; a chunk with
 * `choices: []` may carry it alone) and Perplexity's top-level `citations`.
 * Each field is checked as it arrives: one of the wrong type is refused as
 * EXECUTION naming it (e.g. `choices[0].delta.tool_calls[0].index`);
 * joining the chunks is the core stream reader's.
 */
import { ActionError, type ModelResponse } from "@rolecraft/core"
import * as Effect from "effect/Effect"
import type { ChatCompletionChunk } from "openai/resources/chat/completions"
import { citationsOf, contentOf, isRecord, reasoningOf, usagePartsOf } from "./content.ts"
import { malformed } from "./failure.ts"

const optionalString = (value: unknown): value is string | null | undefined =>
  value === undefined || value === null || typeof value === "string"

const optionalCount = (value: unknown): value is number | null | undefined =>
  value === undefined || value === null || typeof value === "number"

type Usage = ModelResponse.ProviderChunk["usage"]

/** A wire usage object as the provider's usage, or the name of its malformed field. */
const usageOf = (usage: unknown, field: string): Usage | string => {
  if (usage === undefined || usage === null) return undefined
  if (!isRecord(usage)) return `${field} is not an object`
  const { prompt_tokens, completion_tokens, total_tokens } = usage
  if (!optionalCount(prompt_tokens)) return `${field}.prompt_tokens is not a number`
  if (!optionalCount(completion_tokens)) return `${field}.completion_tokens is not a number`
  if (!optionalCount(total_tokens)) return `${field}.total_tokens is not a number`
  return {
    inputTokens: prompt_tokens,
    outputTokens: completion_tokens,
    totalTokens: total_tokens,
    ...usagePartsOf(usage)
  }
}

/** The tool-call fragments of a delta, or the name of the malformed one. */
const fragmentsOf = (calls: unknown): ReadonlyArray<ModelResponse.ToolCallFragment> | string | undefined => {
  if (calls === undefined || calls === null) return undefined
  if (!Array.isArray(calls)) return "choices[0].delta.tool_calls is not an array"
  const fragments: Array<ModelResponse.ToolCallFragment> = []
  for (let i = 0; i < calls.length; i++) {
    const call: unknown = calls[i]
    const field = `choices[0].delta.tool_calls[${i}]`
    if (!isRecord(call)) return `${field} is not an object`
    const index = call.index
    if (index !== undefined && index !== null && (typeof index !== "number" || !Number.isInteger(index) || index < 0)) {
      return `${field}.index is not an integer >= 0`
    }
    if (!optionalString(call.id)) return `${field}.id is not a string`
    const fn = call.function ?? {}
    if (!isRecord(fn)) return `${field}.function is not an object`
    if (!optionalString(fn.name)) return `${field}.function.name is not a string`
    const args = fn.arguments
    fragments.push({
      index,
      id: call.id,
      name: fn.name,
      // Some compatible servers send arguments already parsed.
      arguments:
        args === undefined || args === null ? undefined : typeof args === "string" ? args : JSON.stringify(args)
    })
  }
  return fragments
}

/** The provider chunk of one streamed chunk, or EXECUTION naming its malformed field. */
export const readChunk = (
  action: string,
  chunk: ChatCompletionChunk
): ModelResponse.ProviderChunk | ActionError.ExecutionFailure => {
  const bad = (what: string) => malformed(action, `a stream chunk's ${what}`)
  const raw: unknown = chunk
  if (!isRecord(raw)) return bad("body is not an object")
  const choices = raw.choices
  if (!Array.isArray(choices)) return bad("choices is not an array")
  if (!optionalString(raw.model)) return bad("model is not a string")
  const choice: unknown = choices[0]
  if (choice !== undefined && !isRecord(choice)) return bad("choices[0] is not an object")
  // Moonshot sends the usage inside the choice of the finishing chunk.
  const wireUsage = raw.usage ?? (choice === undefined ? undefined : choice.usage)
  const usage = usageOf(wireUsage, raw.usage === undefined || raw.usage === null ? "choices[0].usage" : "usage")
  if (typeof usage === "string") return bad(usage)
  if (choice === undefined) {
    const citations = citationsOf(undefined, raw.citations)
    return { model: raw.model, usage, citations }
  }
  if (!optionalString(choice.finish_reason)) return bad("choices[0].finish_reason is not a string")
  const delta = choice.delta ?? {}
  if (!isRecord(delta)) return bad("choices[0].delta is not an object")
  const content = contentOf(delta.content, "choices[0].delta.content")
  if ("malformed" in content) return bad(content.malformed)
  const reasoning = reasoningOf(delta, content.reasoning, "choices[0].delta")
  if ("malformed" in reasoning) return bad(reasoning.malformed)
  if (!optionalString(delta.refusal)) return bad("choices[0].delta.refusal is not a string")
  const toolCalls = fragmentsOf(delta.tool_calls)
  if (typeof toolCalls === "string") return bad(toolCalls)
  return {
    model: raw.model,
    usage,
    text: content.text,
    reasoning: reasoning.reasoning,
    reasoningField: reasoning.reasoningField,
    refusal: delta.refusal,
    toolCalls,
    citations: citationsOf(delta.annotations, raw.citations),
    finishReason: choice.finish_reason
  }
}

/** {@link readChunk} as an effect. */
export const chunkOf = (
  action: string,
  chunk: ChatCompletionChunk
): Effect.Effect<ModelResponse.ProviderChunk, ActionError.ExecutionFailure> => {
  const read = readChunk(action, chunk)
  return read instanceof ActionError.ExecutionFailure ? Effect.fail(read) : Effect.succeed(read)
}
