/**
 * A chat completion read as a provider response: the first choice's
 * content (a string, or a list of parts whose thinking parts are
 * reasoning), reasoning (`reasoning_content` or `reasoning`), refusal, tool
 * calls and `url_citation` annotations, its finish reason, the model, the
 * usage (with its cached input and reasoning parts) and Perplexity's top-level `citations`, passed on as sent for
 * `LanguageModel.make` to normalise. It refuses (EXECUTION) only a body
 * without a list of choices or whose first choice has no message, and a
 * content or reasoning of the wrong type.
 */
import type { ActionError, ModelResponse, Prompt } from "@rolecraft/core"
import * as Effect from "effect/Effect"
import type { ChatCompletion } from "openai/resources/chat/completions"
import { citationsOf, contentOf, reasoningOf, usagePartsOf } from "./content.ts"
import { errorEvent, malformed } from "./failure.ts"

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
): Effect.Effect<ModelResponse.ProviderResponse, ActionError.ExecutionFailure | ActionError.TransientFailure> => {
  if (typeof completion !== "object" || completion === null || !Array.isArray(completion.choices)) {
    const error = (completion as { readonly error?: unknown } | null)?.error
    return Effect.fail(
      typeof error === "object" && error !== null ? errorEvent(action, error) : malformed(action, "no choices")
    )
  }
  const choice = completion.choices[0]
  if (choice === undefined || typeof choice.message !== "object" || choice.message === null) {
    return Effect.fail(malformed(action, "no message in the first choice"))
  }
  const message = choice.message as unknown as Readonly<Record<string, unknown>>
  const content = contentOf(message.content, "choices[0].message.content")
  if ("malformed" in content) return Effect.fail(malformed(action, content.malformed))
  const reasoning = reasoningOf(message, content.reasoning, "choices[0].message")
  if ("malformed" in reasoning) return Effect.fail(malformed(action, reasoning.malformed))
  // Read as sent, not as the SDK's types promise: `LanguageModel.make` decides every odd shape.
  const wireCalls: unknown = message.tool_calls
  const toolCalls = Array.isArray(wireCalls) ? wireCalls.map(toolCallOf) : wireCalls
  const usage = completion.usage
  const citations = citationsOf(
    message.annotations,
    (completion as unknown as { readonly citations?: unknown }).citations
  )
  return Effect.succeed({
    text: content.text,
    // The one boundary where unchecked wire values enter: `LanguageModel.make` checks each.
    toolCalls: toolCalls as ReadonlyArray<Prompt.ToolCall>,
    finishReason: choice.finish_reason,
    model: completion.model,
    refusal: message.refusal as string | null | undefined,
    reasoning: reasoning.reasoning,
    reasoningField: reasoning.reasoningField,
    ...(citations === undefined ? {} : { citations }),
    usage:
      usage === undefined || usage === null
        ? undefined
        : {
            inputTokens: usage.prompt_tokens,
            outputTokens: usage.completion_tokens,
            totalTokens: usage.total_tokens,
            ...usagePartsOf(usage as unknown as Readonly<Record<string, unknown>>)
          }
  })
}
