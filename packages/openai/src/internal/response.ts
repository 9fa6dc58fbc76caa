/**
 * A chat completion read as a provider response: the first choice's
 * content, refusal and tool calls, its finish reason, the model and the
 * usage, passed on as sent for `LanguageModel.make` to normalise. It refuses
 * (EXECUTION) only a body without a list of choices or whose first choice
 * has no message.
 */
import type { ActionError, LanguageModel, Prompt } from "@rolecraft/core"
import * as Effect from "effect/Effect"
import type { ChatCompletion } from "openai/resources/chat/completions"
import { malformed } from "./failure.ts"

/**
 * A wire tool call as the provider's raw call: a `custom` call by its input; any other entry — `type`
 * `"function"`, missing or unknown — by its `function` object's name and arguments, raw (a missing `type`
 * on an otherwise complete call is a function call). Entries that are not objects pass on as they are.
 */
const toolCallOf = (entry: unknown): unknown => {
  if (typeof entry !== "object" || entry === null) return entry
  const call = entry as {
    readonly id?: unknown
    readonly type?: unknown
    readonly function?: unknown
    readonly custom?: unknown
  }
  const body = (call.type === "custom" ? call.custom : call.function) as
    | { readonly name?: unknown; readonly arguments?: unknown; readonly input?: unknown }
    | null
    | undefined
  const inner = typeof body === "object" && body !== null ? body : {}
  return {
    id: call.id,
    name: inner.name,
    arguments: call.type === "custom" ? inner.input : inner.arguments
  }
}

/** The provider response of a chat completion, or EXECUTION when it has no first choice or message. */
export const responseOf = (
  action: string,
  completion: ChatCompletion
): Effect.Effect<LanguageModel.ProviderResponse, ActionError.ExecutionFailure> => {
  if (typeof completion !== "object" || completion === null || !Array.isArray(completion.choices)) {
    return Effect.fail(malformed(action, "no choices"))
  }
  const choice = completion.choices[0]
  if (choice === undefined || typeof choice.message !== "object" || choice.message === null) {
    return Effect.fail(malformed(action, "no message in the first choice"))
  }
  const message = choice.message
  // Read as sent, not as the SDK's types promise: `LanguageModel.make` decides every odd shape.
  const wireCalls: unknown = message.tool_calls
  const toolCalls = Array.isArray(wireCalls) ? wireCalls.map(toolCallOf) : wireCalls
  return Effect.succeed({
    text: message.content,
    // The one boundary where unchecked wire values enter: `LanguageModel.make` checks each.
    toolCalls: toolCalls as ReadonlyArray<Prompt.ToolCall>,
    finishReason: choice.finish_reason,
    model: completion.model,
    refusal: message.refusal,
    usage:
      completion.usage === undefined || completion.usage === null
        ? undefined
        : {
            inputTokens: completion.usage.prompt_tokens,
            outputTokens: completion.usage.completion_tokens,
            totalTokens: completion.usage.total_tokens
          }
  })
}
