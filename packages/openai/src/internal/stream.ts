/**
 * A streamed chat completion chunk read as a provider chunk: the first
 * choice's `delta` (content, refusal, tool-call fragments by `index`), its
 * `finish_reason`, the model and the usage (on the last chunk, whose
 * `choices` is empty). Each field is checked as it arrives: one of the wrong
 * type is refused as EXECUTION naming it (e.g.
 * `choices[0].delta.tool_calls[0].index`); joining the chunks is
 * `LanguageModel.make`'s.
 */
import type { ActionError, LanguageModel } from "@rolecraft/core"
import * as Effect from "effect/Effect"
import type { ChatCompletionChunk } from "openai/resources/chat/completions"
import { malformed } from "./failure.ts"

const isRecord = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const optionalString = (value: unknown): value is string | null | undefined =>
  value === undefined || value === null || typeof value === "string"

const optionalCount = (value: unknown): value is number | null | undefined =>
  value === undefined || value === null || typeof value === "number"

/** The provider chunk of one streamed chunk, or EXECUTION naming its malformed field. */
export const chunkOf = (
  action: string,
  chunk: ChatCompletionChunk
): Effect.Effect<LanguageModel.ProviderChunk, ActionError.ExecutionFailure> => {
  const bad = (field: string, detail: string) => Effect.fail(malformed(action, `a stream chunk's ${field} ${detail}`))
  const raw: unknown = chunk
  if (!isRecord(raw)) return bad("body", "is not an object")
  const choices = raw.choices
  if (!Array.isArray(choices)) return bad("choices", "is not an array")
  const usage = raw.usage
  if (usage !== undefined && usage !== null && !isRecord(usage)) return bad("usage", "is not an object")
  if (isRecord(usage)) {
    for (const key of ["prompt_tokens", "completion_tokens", "total_tokens"]) {
      if (!optionalCount(usage[key])) return bad(`usage.${key}`, "is not a number")
    }
  }
  if (!optionalString(raw.model)) return bad("model", "is not a string")
  const common = {
    model: raw.model,
    usage: isRecord(usage)
      ? {
          inputTokens: usage.prompt_tokens as number | null | undefined,
          outputTokens: usage.completion_tokens as number | null | undefined,
          totalTokens: usage.total_tokens as number | null | undefined
        }
      : undefined
  }
  const choice: unknown = choices[0]
  if (choice === undefined) return Effect.succeed(common)
  if (!isRecord(choice)) return bad("choices[0]", "is not an object")
  if (!optionalString(choice.finish_reason)) return bad("choices[0].finish_reason", "is not a string")
  const delta = choice.delta ?? {}
  if (!isRecord(delta)) return bad("choices[0].delta", "is not an object")
  if (!optionalString(delta.content)) return bad("choices[0].delta.content", "is not a string")
  if (!optionalString(delta.refusal)) return bad("choices[0].delta.refusal", "is not a string")
  const calls = delta.tool_calls ?? []
  if (!Array.isArray(calls)) return bad("choices[0].delta.tool_calls", "is not an array")
  const toolCalls: Array<LanguageModel.ToolCallFragment> = []
  for (let i = 0; i < calls.length; i++) {
    const call: unknown = calls[i]
    const field = `choices[0].delta.tool_calls[${i}]`
    if (!isRecord(call)) return bad(field, "is not an object")
    if (typeof call.index !== "number" || !Number.isInteger(call.index) || call.index < 0) {
      return bad(`${field}.index`, "is not an integer >= 0")
    }
    if (!optionalString(call.id)) return bad(`${field}.id`, "is not a string")
    const fn = call.function ?? {}
    if (!isRecord(fn)) return bad(`${field}.function`, "is not an object")
    if (!optionalString(fn.name)) return bad(`${field}.function.name`, "is not a string")
    toolCalls.push({
      index: call.index,
      id: call.id,
      name: fn.name,
      // Some compatible servers send arguments already parsed.
      arguments:
        fn.arguments === undefined || fn.arguments === null
          ? undefined
          : typeof fn.arguments === "string"
            ? fn.arguments
            : JSON.stringify(fn.arguments)
    })
  }
  return Effect.succeed({
    ...common,
    text: delta.content,
    refusal: delta.refusal,
    toolCalls,
    finishReason: choice.finish_reason
  })
}
